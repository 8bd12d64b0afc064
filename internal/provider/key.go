package provider

// Credential is how an adapter authenticates, decided in one place for
// every adapter: its provider, the key read through Config.Getenv (never
// logged), the variable it came from, the base-URL variable that points
// it at `aos dev model-server`, and whether its base URL is the provider's
// real API.
type Credential struct {
	Provider ID
	Key      string
	KeyEnv   string
	BaseEnv  string
	Real     bool
}

// Check returns a *MissingKeyError naming KeyEnv when no key is set.
func (c Credential) Check() error {
	if c.Key == "" {
		return &MissingKeyError{Provider: c.Provider, EnvVar: c.KeyEnv}
	}
	return nil
}

// Served refuses a scripted model ("script:NAME") when the base URL is the
// provider's real API: a *ScriptedModelError naming BaseEnv.
func (c Credential) Served(model string) error {
	if IsScripted(model) && c.Real {
		return &ScriptedModelError{Model: model, EnvVar: c.BaseEnv}
	}
	return nil
}

// For returns the key a call to model must send in place of the client's:
// "" keeps the client's (a key is set); ScriptedKey for a scripted model
// when no key is set (the scripted server takes any). A scripted model
// asked of the real API is a *ScriptedModelError at once; any other model
// without a key is a *MissingKeyError.
func (c Credential) For(model string) (string, error) {
	if err := c.Served(model); err != nil {
		return "", err
	}
	if c.Key != "" {
		return "", nil
	}
	if IsScripted(model) {
		return ScriptedKey, nil
	}
	return "", c.Check()
}
