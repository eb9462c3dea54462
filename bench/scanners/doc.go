// SPDX-License-Identifier: Apache-2.0

// Package scanners compares the JSON readers the exporter could use on its
// bodies (see bench/RESULTS.md, "The scanner"). It is a module of its own so
// that the libraries it measures are not the exporter's dependencies.
package scanners
