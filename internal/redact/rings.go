package redact

import "sync"

// Rings redacts a text of every key of several key rings: one per target
// of a process, each with its own keys, and one logger that must remove
// them all. Safe for concurrent use; its zero value holds none.
type Rings struct {
	mu    sync.RWMutex
	rings []*Keyring
}

// Add adds a key ring; Remove takes it away again (a target gone).
func (r *Rings) Add(k *Keyring) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rings = append(r.rings, k)
}

// Remove takes a key ring away.
func (r *Rings) Remove(k *Keyring) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, o := range r.rings {
		if o == k {
			r.rings = append(r.rings[:i:i], r.rings[i+1:]...)
			return
		}
	}
}

// Redact returns s without any piece of any key of any ring (see
// Keyring.Redact), decoding s once for all of them.
func (r *Rings) Redact(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	sets := make([]*set, 0, len(r.rings))
	for _, k := range r.rings {
		if k != nil {
			sets = append(sets, k.state.Load())
		}
	}
	r.mu.RUnlock()
	return redact(s, sets...)
}
