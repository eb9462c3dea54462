package client

// StaticKey returns a key source for a fixed key (from an environment
// variable, say).
func StaticKey(key string) func() (string, error) {
	return func() (string, error) { return key, nil }
}
