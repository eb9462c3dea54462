package collector

import (
	"math"
	"strconv"
)

// DefaultGridDegrees is the default resolution of the conflict event grid.
const DefaultGridDegrees = 5.0

// cell is a grid cell, identified by the index of its south-west corner in
// units of the resolution.
type cell struct{ lat, lon int }

type cellStats struct {
	count  int
	escMax float64
}

// grid aggregates events into cells aligned to multiples of the resolution:
// at 5°, latitudes in [-30, -25) fall in the cell labelled -27.5. Memory is
// bounded by the number of cells on Earth at that resolution, whatever the
// number of events.
type grid struct {
	degrees float64
	cells   map[cell]*cellStats
}

func newGrid(degrees float64) *grid {
	return &grid{degrees: degrees, cells: map[cell]*cellStats{}}
}

func (g *grid) add(lat, lon, escalation float64) {
	c := g.cellOf(lat, lon)
	st := g.cells[c]
	if st == nil {
		st = &cellStats{escMax: escalation}
		g.cells[c] = st
	}
	st.count++
	st.escMax = math.Max(st.escMax, escalation)
}

// cellOf places a valid position (the client refuses latitudes outside
// [-90, 90] and longitudes outside [-180, 180]) in its cell: the North
// Pole joins the cell below it, and 180°E is 180°W.
func (g *grid) cellOf(lat, lon float64) cell {
	if lon == 180 {
		lon = -180
	}
	latIdx := int(math.Floor(lat / g.degrees))
	if top := int(math.Ceil(90/g.degrees)) - 1; latIdx > top {
		latIdx = top
	}
	return cell{lat: latIdx, lon: int(math.Floor(lon / g.degrees))}
}

// centre returns the labels of a cell: the coordinates of its centre.
func (g *grid) centre(c cell) (lat, lon string) {
	f := func(idx int) string {
		// Rounded so that 0.1° cells read "0.15", not "0.15000000000000002".
		return strconv.FormatFloat(math.Round((float64(idx)+0.5)*g.degrees*1e6)/1e6, 'f', -1, 64)
	}
	return f(c.lat), f(c.lon)
}
