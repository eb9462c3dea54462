package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/global-stability/global_stability_exporter/targets"
)

// screenArgs takes out of args what kingpin would stop at: a flag it does
// not know, a boolean flag given a value, an argument (the exporter takes
// none). kingpin reports only the first of these and reads nothing after
// it, so every other problem of the command line would wait for the next
// run; screened first, each becomes a problem of its own, and kingpin
// reads the rest, whose problems are reported in the same run.
func screenArgs(app *kingpin.Application, args []string) (kept []string, problems []error) {
	flags := map[string]*kingpin.FlagModel{}
	for _, f := range app.Model().Flags {
		flags[f.Name] = f
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			for _, stray := range args[i+1:] {
				problems = append(problems, strayArgument(stray))
			}
			return kept, problems
		case arg == "-h":
			kept = append(kept, arg)
			continue
		case !strings.HasPrefix(arg, "-") || arg == "-":
			problems = append(problems, strayArgument(arg))
			continue
		case !strings.HasPrefix(arg, "--"):
			problems = append(problems, fmt.Errorf("%s: unknown short flag; the exporter's flags are long ones, such as --api.url (see --help)", shown(arg)))
			continue
		}
		name, value, hasValue := strings.Cut(arg[2:], "=")
		f, known := flags[name]
		if !known {
			if b, ok := flags[strings.TrimPrefix(name, "no-")]; ok && strings.HasPrefix(name, "no-") && b.IsBoolFlag() {
				f, known = b, true
			}
		}
		switch {
		case known && f.IsBoolFlag() && hasValue:
			base := strings.TrimPrefix(name, "no-")
			problems = append(problems, fmt.Errorf("--%s=%s: a boolean flag takes no value: write --%s to turn it on or --no-%s to turn it off (in the environment, %s=true or false)",
				name, shown(value), base, base, f.Envar))
		case known:
			kept = append(kept, arg)
			if !f.IsBoolFlag() && !hasValue && i+1 < len(args) {
				i++ // its value
				kept = append(kept, args[i])
			}
		default:
			// The value of an unknown flag is not echoed: it may be a key.
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++ // most likely its value, not an argument of its own
			}
			problems = append(problems, unknownFlag(name, flags))
		}
	}
	return kept, problems
}

// keyFlag matches the flags a user may try for the key itself.
var keyFlag = regexp.MustCompile(`^(api[.-]?)?(key|apikey|api-key|token|secret|bearer|password)$`)

// unknownFlag explains a flag the exporter does not have: a key given as a
// flag is refused with the reason and the two ways that work; anything
// else gets the nearest flag's name when there is a close one.
func unknownFlag(name string, flags map[string]*kingpin.FlagModel) error {
	if keyFlag.MatchString(strings.ToLower(name)) {
		return fmt.Errorf("--%s: there is no flag for the API key, on purpose: a flag's value shows in ps, /proc and shell history. Put the key in a file readable only by the exporter and pass --api.key-file=PATH, or set the environment variable %s", name, targets.KeyEnv)
	}
	var names []string
	for candidate, f := range flags {
		if !f.Hidden && candidate != "help" && candidate != "version" {
			names = append(names, candidate)
		}
	}
	if best := targets.Nearest(name, names); best != "" {
		return fmt.Errorf("--%s: unknown flag; did you mean --%s? (see --help)", name, best)
	}
	return fmt.Errorf("--%s: unknown flag (see --help for the flags)", name)
}

// strayArgument explains an argument: the exporter takes only flags.
func strayArgument(arg string) error {
	return fmt.Errorf("%s: the exporter takes no arguments, only --flags (a value given after a space belongs to the flag before it; a boolean flag takes none; see --help)", shown(arg))
}

// shown is a command-line word as a message may quote it. A word the
// exporter does not understand may be a key typed in the wrong place, so
// a long one is shown by its start and length only, below the length
// that counts as a piece of a key (redact.MinPiece).
func shown(word string) string {
	if len(word) < 8 {
		return fmt.Sprintf("%q", word)
	}
	return fmt.Sprintf("%q (%d characters)", word[:4]+"…", len(word))
}
