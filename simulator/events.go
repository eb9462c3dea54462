// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"fmt"
	"strings"
	"time"
)

// ACLED-like event categories.
const (
	catBattles   = "battles"
	catRemote    = "explosions_remote_violence"
	catCivilians = "violence_against_civilians"
	catStrategic = "strategic_developments"
	catProtests  = "protests"
	catRiots     = "riots"
)

var (
	armedCategories  = []string{catBattles, catBattles, catRemote, catRemote, catCivilians, catStrategic}
	unrestCategories = []string{catProtests, catProtests, catProtests, catRiots}
)

// hotspot is a real-world place where events cluster.
type hotspot struct {
	place      string
	lat, lon   float64
	actors     []string
	categories []string
	escalation float64 // typical escalation in [0, 1]
	weight     int     // relative share of events
}

var hotspots = []hotspot{
	{"Donetsk, Ukraine", 48.02, 37.80, []string{"Armed Forces of Ukraine", "Russian Armed Forces"}, armedCategories, 0.78, 10},
	{"Kharkiv, Ukraine", 49.99, 36.23, []string{"Armed Forces of Ukraine", "Russian Armed Forces"}, armedCategories, 0.66, 5},
	{"Gaza City", 31.50, 34.47, []string{"Israel Defense Forces", "Hamas", "Palestinian Islamic Jihad"}, armedCategories, 0.82, 8},
	{"southern Lebanon", 33.27, 35.20, []string{"Israel Defense Forces", "Hezbollah"}, armedCategories, 0.58, 3},
	{"Khartoum, Sudan", 15.50, 32.56, []string{"Sudanese Armed Forces", "Rapid Support Forces"}, armedCategories, 0.80, 7},
	{"El Fasher, Sudan", 13.63, 25.35, []string{"Rapid Support Forces", "Joint Darfur Force"}, armedCategories, 0.84, 5},
	{"Goma, DR Congo", -1.68, 29.22, []string{"M23", "Forces Armées de la République Démocratique du Congo", "Wazalendo militias"}, armedCategories, 0.70, 6},
	{"Mogadishu, Somalia", 2.05, 45.32, []string{"Al-Shabaab", "Somali National Army"}, armedCategories, 0.62, 4},
	{"Hodeidah, Yemen", 14.80, 42.95, []string{"Houthi forces (Ansar Allah)", "Yemeni government forces"}, armedCategories, 0.60, 4},
	{"Sagaing, Myanmar", 21.88, 95.98, []string{"Tatmadaw", "People's Defence Force"}, armedCategories, 0.64, 5},
	{"Port-au-Prince, Haiti", 18.54, -72.34, []string{"Viv Ansanm gang coalition", "Haitian National Police"}, armedCategories, 0.55, 4},
	{"Mopti, Mali", 14.49, -4.19, []string{"JNIM", "Malian Armed Forces", "Africa Corps"}, armedCategories, 0.68, 4},
	{"Djibo, Burkina Faso", 14.10, -1.63, []string{"JNIM", "Burkina Faso Armed Forces", "Volunteers for the Defence of the Homeland"}, armedCategories, 0.71, 3},
	{"Maiduguri, Nigeria", 11.85, 13.16, []string{"ISWAP", "Nigerian Army"}, armedCategories, 0.63, 3},
	{"Cabo Delgado, Mozambique", -12.35, 40.35, []string{"Islamic State Mozambique", "Forças Armadas de Defesa de Moçambique"}, armedCategories, 0.52, 2},
	{"Amhara, Ethiopia", 11.59, 37.39, []string{"Fano militia", "Ethiopian National Defense Force"}, armedCategories, 0.57, 3},
	{"Quetta, Pakistan", 30.18, 66.99, []string{"Balochistan Liberation Army", "Pakistan Army"}, armedCategories, 0.54, 2},
	{"Culiacán, Mexico", 24.80, -107.39, []string{"Sinaloa Cartel (Chapitos faction)", "Sinaloa Cartel (Mayo faction)"}, armedCategories, 0.50, 3},
	{"Aleppo, Syria", 36.20, 37.16, []string{"Syrian government forces", "Syrian Democratic Forces"}, armedCategories, 0.48, 2},
	{"Paris, France", 48.86, 2.35, []string{"Protesters (France)", "Police Forces of France"}, unrestCategories, 0.12, 2},
	{"Nairobi, Kenya", -1.29, 36.82, []string{"Protesters (Kenya)", "Police Forces of Kenya"}, unrestCategories, 0.25, 2},
	{"Dhaka, Bangladesh", 23.81, 90.41, []string{"Protesters (Bangladesh)", "Rioters (Bangladesh)"}, unrestCategories, 0.30, 2},
	{"Caracas, Venezuela", 10.49, -66.88, []string{"Protesters (Venezuela)", "Bolivarian National Guard"}, unrestCategories, 0.28, 2},
}

var hotspotTotalWeight = func() int {
	t := 0
	for _, h := range hotspots {
		t += h.weight
	}
	return t
}()

// eventWindow is how long one generation of "recent events" stays put:
// within an hour the list is stable, so a paginated walk sees one list.
const eventWindow = time.Hour

// eventLookback is how far back "recent" events reach.
const eventLookback = 7 * 24 * time.Hour

// event generates event i of the window starting at windowStart.
func (w *world) event(window int64, i int, conflictScore float64) eventJSON {
	key := func(k uint64) uint64 { return w.hash(0xe7e47, uint64(window), uint64(i), k) }
	u := func(k uint64) float64 { return float64(key(k)>>11) / (1 << 53) }

	pick := int(key(0) % uint64(hotspotTotalWeight))
	h := hotspots[0]
	for _, c := range hotspots {
		if pick < c.weight {
			h = c
			break
		}
		pick -= c.weight
	}
	// A place flares up for a few hours at a time, so the busiest actors
	// change over a day.
	if u(12) < 0.3 {
		h = hotspots[w.hash(0xf1a4e, uint64(window/surgeWindows))%uint64(len(hotspots))]
	}
	actors := []string{h.actors[key(1)%uint64(len(h.actors))]}
	if u(2) < 0.7 && len(h.actors) > 1 {
		second := h.actors[(key(1)+1+key(3)%uint64(len(h.actors)-1))%uint64(len(h.actors))]
		actors = append(actors, second)
	}
	// A long tail of local actors, each named by few events.
	if u(10) < 0.25 {
		actors = append(actors, localActors[key(11)%uint64(len(localActors))]+" ("+h.place+")")
	}
	// A tenser conflict pillar nudges every event's escalation upward.
	esc := h.escalation*(0.8+0.4*conflictScore/100) + 0.2*(u(4)-0.5)
	windowStart := time.Unix(window*int64(eventWindow/time.Second), 0).UTC()
	occurred := windowStart.Add(-time.Duration(u(5) * float64(eventLookback))).Truncate(time.Millisecond)
	return eventJSON{
		ID:         fmt.Sprintf("evt_%012x", key(6)>>16),
		Lat:        round(clamp(h.lat+(u(7)-0.5), -90, 90), 4),
		Lon:        round(clamp(h.lon+(u(8)-0.5), -180, 180), 4),
		Actors:     actors,
		Category:   h.categories[key(9)%uint64(len(h.categories))],
		Escalation: round(clamp(esc, 0, 1), 3),
		OccurredAt: occurred.Format("2006-01-02T15:04:05.000Z07:00"),
	}
}

// surgeWindows is how many event windows one place's flare-up lasts.
const surgeWindows = 3

// localActors are the kinds of actor only a place's own events name.
var localActors = []string{"Unidentified armed group", "Communal militia", "Civilians", "Local defence committee", "Vigilante group"}

func eventWindowOf(now time.Time) int64 { return now.Unix() / int64(eventWindow/time.Second) }

// briefingTemplates give the headline and text of each pillar's briefing,
// formats of a place in the news (%[1]s) and the pillar's score that morning
// (%.1[2]f).
var briefingTemplates = []struct {
	pillar, headline, summary string
	tags                      []string
}{
	{"conflict", "Fighting intensifies around %[1]s as the conflict pillar reaches %.1[2]f",
		"Analysts tracked a rise in armed clashes around %[1]s. The conflict pillar stands at %.1[2]f; escalation risk remains concentrated in a handful of theatres.",
		[]string{"conflict", "security"}},
	{"cyber", "Ransomware wave hits logistics operators; cyber pillar at %.1[2]f",
		"A coordinated ransomware campaign disrupted logistics and port operators, with spill-over reported near %[1]s. The cyber pillar stands at %.1[2]f.",
		[]string{"cyber", "ransomware"}},
	{"supply_chain", "Shipping delays lengthen as chokepoint risk near %[1]s stays elevated",
		"Rerouting around contested waters near %[1]s keeps freight rates high. The supply chain pillar stands at %.1[2]f.",
		[]string{"supply_chain", "shipping"}},
	{"macro", "Markets weigh sovereign risk as the macro pillar moves to %.1[2]f",
		"Sovereign spreads widened modestly while commodity volatility stayed contained; exposure to %[1]s weighs on regional outlooks. The macro pillar stands at %.1[2]f.",
		[]string{"macro", "markets"}},
}

// placeTag is a briefing's tag of its place: its country, or its name.
func placeTag(place string) string {
	return strings.ToLower(strings.TrimSpace(place[strings.LastIndex(place, ",")+1:]))
}

// briefingHour is when the daily briefing is published (UTC).
const briefingHour = 6

// briefing k is the k-th newest daily briefing at now (k = 0 is the latest).
func (w *world) briefing(now time.Time, k int) briefingJSON {
	day := now.UTC().Truncate(24 * time.Hour).Add(briefingHour * time.Hour)
	if day.After(now) {
		day = day.Add(-24 * time.Hour)
	}
	day = day.AddDate(0, 0, -k)
	dayNum := uint64(day.Unix() / 86400)
	t := briefingTemplates[w.hash(0xb41ef, dayNum)%uint64(len(briefingTemplates))]
	place := hotspots[w.hash(0x91ace, dayNum)%uint64(len(hotspots))].place
	score := round(w.pillarScore(pillarIndex(t.pillar), minute(day)), 1)
	return briefingJSON{
		ID:          fmt.Sprintf("brf_%s_%04x", day.Format("20060102"), w.hash(0xb41ef, dayNum, 1)&0xffff),
		Headline:    fmt.Sprintf(t.headline, place, score),
		Summary:     fmt.Sprintf(t.summary, place, score),
		Tags:        append([]string{"daily", placeTag(place)}, t.tags...),
		PublishedAt: day.Format(time.RFC3339),
	}
}
