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
