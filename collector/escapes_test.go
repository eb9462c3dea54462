// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
)

// Escapes an upstream writes text in, each a function of one character
// (so that each piece of the key has an encoding of its own to look for),
// each escape introducer at least once.
var charEscapes = map[string]func(r rune) string{
	// .NET's System.Text.Json escapes '+', '/', '=', '&', '<', '>' and
	// every non-ASCII character by default; here, every character, as
	// some frameworks do.
	"JSON \\u":                func(r rune) string { return fmt.Sprintf(`\u%04X`, r) },
	"JavaScript \\u{X}":       func(r rune) string { return fmt.Sprintf(`\u{%x}`, r) },
	"JavaScript \\xHH":        func(r rune) string { return fmt.Sprintf(`\x%02x`, r) },
	"HTML decimal":            func(r rune) string { return fmt.Sprintf("&#%d;", r) },
	"HTML hex":                func(r rune) string { return fmt.Sprintf("&#x%x;", r) },
	"HTML hex without its ;":  func(r rune) string { return fmt.Sprintf("&#X%X", r) },
	"percent":                 func(r rune) string { return fmt.Sprintf("%%%02X", r) },
	"percent, lower-case hex": func(r rune) string { return fmt.Sprintf("%%%02x", r) },
}

func escapeAll(s string, esc func(rune) string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(esc(r))
	}
	return b.String()
}

// dotnetJSON escapes as System.Text.Json does by default.
func dotnetJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0x7e || strings.ContainsRune(`+/=&<>'"\`, r) {
			fmt.Fprintf(&b, `\u%04X`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapedLeak finds a piece of key (MinPiece bytes) written with esc in
// text: the tests' own check, independent of the redactor's decoding.
func escapedLeak(text, key string, esc func(rune) string) string {
	for i := 0; i+8 <= len(key); i++ {
		if !utf8.RuneStart(key[i]) {
			continue
		}
		piece := key[i:min(len(key), i+8)]
		if strings.Contains(text, escapeAll(piece, esc)) {
			return piece
		}
	}
	return ""
}

// TestTheKeyNeverLeavesThroughAnEscape: an upstream that writes the key
// back in an escape (a .NET-style JSON 401, every character as \uXXXX, an
// HTML page of numeric references, percent-encoding, base64 of an escaped
// body; a category or indicator spelled that way) gets no piece of it, in
// that escape, into the log or /metrics; a name that decodes to a piece of
// the key is left out and counted, never a label value.
func TestTheKeyNeverLeavesThroughAnEscape(t *testing.T) {
	key := "Gsk/Live+Key=7Qx9_Zz-AbCdEfGh/ijKL"
	healthy := fakeAPI(healthyBodies(func(p string) string {
		return `{"pillar":"` + p + `","delta_24h":0.5,"indicators":[],"as_of":"2026-11-22T00:00:00Z"}`
	}, healthyOverview("stable")))
	for name, esc := range charEscapes {
		for _, tc := range []struct {
			where    string
			endpoint string
			respond  func(w http.ResponseWriter)
			check    func(*testing.T, promtext.Samples)
		}{
			{"401 body", "global-stability", func(w http.ResponseWriter) {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `<!DOCTYPE html><p>The key %s is revoked.</p>`, escapeAll(key, esc))
			}, failed("global-stability")},
			{"category", "conflict", func(w http.ResponseWriter) {
				fmt.Fprintf(w, `{"events":[{"id":"evt_1","lat":1,"lon":2,"actors":[],"category":%q,"escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`,
					strings.ReplaceAll(escapeAll(key, esc), `\`, `\\`))
			}, leftOut("conflict", "events", "global_stability_conflict_events_by_category")},
			{"actor", "conflict", func(w http.ResponseWriter) {
				fmt.Fprintf(w, `{"events":[{"id":"evt_1","lat":1,"lon":2,"actors":[%q],"category":"riots","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`,
					strings.ReplaceAll(escapeAll(key, esc), `\`, `\\`))
			}, leftOut("conflict", "actors", "global_stability_conflict_events_by_actor")},
			{"tag", "briefings", func(w http.ResponseWriter) {
				fmt.Fprintf(w, `{"briefings":[{"tags":[%q],"published_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`,
					"topic "+strings.ReplaceAll(escapeAll(key[3:20], esc), `\`, `\\`))
			}, leftOut("briefings", "tags", "global_stability_briefings_by_tag")},
			{"indicator key", "global-stability/pillar/cyber", func(w http.ResponseWriter) {
				fmt.Fprintf(w, `{"pillar":"cyber","delta_24h":1,"indicators":[{"key":%q,"value":1}],"as_of":"2026-11-22T00:00:00Z"}`,
					"cves "+strings.ReplaceAll(escapeAll(key[3:20], esc), `\`, `\\`))
			}, leftOut("global-stability/pillar/cyber", "indicators", "global_stability_pillar_indicator")},
			{"trend", "global-stability", func(w http.ResponseWriter) {
				fmt.Fprint(w, healthyOverview(escapeAll(key[10:30], esc)))
			}, leftOut("global-stability", "trend", "global_stability_trend")},
		} {
			t.Run(name+"/"+tc.where, func(t *testing.T) {
				inBubble(t, func(t *testing.T) {
					upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if strings.TrimPrefix(r.URL.Path, "/v1/") != tc.endpoint {
							healthy.ServeHTTP(w, r)
							return
						}
						tc.respond(w)
					})
					logs, body := scrapeWithKey(t, upstream, key)
					tc.check(t, parseSamples(t, body))
					// logfmt and the exposition format write a backslash as two.
					unquoted := strings.NewReplacer(`\\`, `\`, `\"`, `"`)
					for what, text := range map[string]string{"the log": unquoted.Replace(logs), "/metrics": unquoted.Replace(body)} {
						for _, e := range charEscapes {
							if piece := escapedLeak(text, key, e); piece != "" {
								t.Errorf("%s shows %q of the key, escaped:\n%s", what, piece, text)
							}
						}
					}
				})
			})
		}
	}
}

// TestTheKeyNeverLeavesThroughNestedEscapes: a .NET JSON error body, and
// the same inside base64 and percent-encoding, leave nothing the
// tests' own decoding (base64, then JSON) can read back.
func TestTheKeyNeverLeavesThroughNestedEscapes(t *testing.T) {
	key := "Gsk/Live+Key=7Qx9_Zz-AbCdEfGh/ijKL"
	netBody := `{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.2","title":"Unauthorized","detail":"` + dotnetJSON("Bearer "+key) + `"}`
	healthy := fakeAPI(healthyBodies(func(p string) string {
		return `{"pillar":"` + p + `","delta_24h":0.5,"indicators":[],"as_of":"2026-11-22T00:00:00Z"}`
	}, healthyOverview("stable")))
	for name, body := range map[string]string{
		".NET JSON":             netBody,
		"base64 of .NET JSON":   `{"trace":"` + base64.StdEncoding.EncodeToString([]byte(netBody)) + `"}`,
		"percent of .NET JSON":  "error=" + escapeAll(netBody, charEscapes["percent"]),
		"JSON-escaped entities": `{"html":"` + strings.ReplaceAll(escapeAll(key, charEscapes["HTML decimal"]), "&", `\u0026`) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/v1/summaries" {
						healthy.ServeHTTP(w, r)
						return
					}
					w.Header().Set("Content-Type", "application/problem+json")
					w.WriteHeader(http.StatusUnauthorized)
					fmt.Fprint(w, body)
				})
				logs, _ := scrapeWithKey(t, upstream, key)
				if !strings.Contains(logs, "summaries") || !strings.Contains(logs, "401") {
					t.Fatalf("the 401 was not logged:\n%s", logs)
				}
				for _, text := range testDecodings(logs) {
					for i := 0; i+8 <= len(key); i++ {
						if strings.Contains(text, key[i:i+8]) {
							t.Fatalf("the log, decoded, shows %q of the key:\n%s", key[i:i+8], logs)
						}
					}
				}
			})
		})
	}
}

// testDecodings are the log as it is, with its JSON \u escapes, HTML
// entities and percent-escapes undone, and each base64 run in it decoded
// then JSON-unescaped: the tests' own reading, with the standard library.
func testDecodings(logs string) []string {
	out := []string{logs}
	unescapeJSON := func(s string) string {
		var v string
		if err := json.Unmarshal([]byte(`"`+strings.ReplaceAll(strings.ReplaceAll(s, `"`, `\"`), `\\u`, `\u`)+`"`), &v); err == nil {
			return v
		}
		return regexp.MustCompile(`\\u[0-9a-fA-F]{4}`).ReplaceAllStringFunc(s, func(m string) string {
			var r rune
			_, _ = fmt.Sscanf(m[2:], "%04x", &r)
			return string(r)
		})
	}
	for _, s := range []string{logs, unescapeJSON(logs)} {
		out = append(out, s, unescapeJSON(s))
		for _, run := range regexp.MustCompile(`[A-Za-z0-9+/]{16,}={0,2}`).FindAllString(s, -1) {
			if b, err := base64.StdEncoding.DecodeString(run); err == nil {
				out = append(out, string(b), unescapeJSON(string(b)))
			}
		}
		out = append(out, regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, func(m string) string {
			var c byte
			_, _ = fmt.Sscanf(m[1:], "%02X", &c)
			return string(c)
		}))
	}
	return out
}
