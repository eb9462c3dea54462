package endpoint

import (
	"context"
	"io"

	"github.com/global-stability/global_stability_exporter/client"
)

// Fetch collects e through cl, every page of a paged endpoint, and returns
// what it gives. On error nothing of it is usable: a partial list would
// look like a whole one.
func (e *Endpoint) Fetch(ctx context.Context, cl *client.Client, c Config) (Result, error) {
	if c.Keys == nil {
		c.Keys = cl.Keys() // the names are judged against the keys it sends
	}
	col := e.Start(c)
	var err error
	if e.Paged {
		_, err = cl.Walk(ctx, e.Label, e.Limit, col.Read)
	} else {
		err = cl.Get(ctx, e.Label, e.Limit, func(r io.Reader) error {
			_, err := col.Read(r, 0)
			return err
		})
	}
	if err != nil {
		return Result{}, err
	}
	return col.Result(), nil
}
