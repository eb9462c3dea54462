package client

import (
	"encoding/json"
)

// referenceEventPage is how pages of /v1/conflict were decoded before the
// scanner: encoding/json, like every other endpoint. It is kept as the
// reference the scanner must agree with (FuzzEventPageDecoders) and as the
// baseline of BenchmarkDecodeEventPage.
var referenceEventPage = jsonPage("events", func(dec *json.Decoder, prefix string) (Event, error) {
	var w wireEvent
	if err := decodeValue(dec, &w, prefix); err != nil {
		return Event{}, err
	}
	f := fields{prefix: prefix}
	e := w.convert(&f)
	return e, f.error()
})

// wireEvent is the encoding/json shape of an event, for the reference.
type wireEvent struct {
	ID         *string   `json:"id"`
	Lat        *float64  `json:"lat"`
	Lon        *float64  `json:"lon"`
	Actors     *[]string `json:"actors"`
	Category   *string   `json:"category"`
	Escalation *float64  `json:"escalation"`
	OccurredAt *string   `json:"occurred_at"`
}

func (w *wireEvent) convert(f *fields) Event {
	return Event{
		ID:         f.str("id", w.ID),
		Lat:        f.num("lat", w.Lat),
		Lon:        f.num("lon", w.Lon),
		Actors:     f.strings("actors", w.Actors),
		Category:   f.str("category", w.Category),
		Escalation: f.num("escalation", w.Escalation),
		OccurredAt: f.time("occurred_at", w.OccurredAt),
	}
}
