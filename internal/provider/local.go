package provider

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Local models are served by an OpenAI-compatible Chat Completions endpoint
// on the owner's machine or network (Ollama, llama.cpp's server, vLLM,
// LM Studio). Their ids carry LocalPrefix ("local:qwen3-coder"); the
// endpoint is sent the name after it ("qwen3-coder").
const (
	// LocalPrefix starts the id of every local model.
	LocalPrefix = "local:"
	// EnvLocalBase is the endpoint's base URL, ending in /v1 for all four
	// servers above ("http://127.0.0.1:11434/v1" for Ollama).
	EnvLocalBase = "AOS_LOCAL_BASE_URL"
	// EnvLocalKey is the endpoint's API key, when it wants one (vLLM's
	// --api-key, LM Studio behind a proxy). It is read from the
	// environment only, like every key.
	EnvLocalKey = "AOS_LOCAL_API_KEY"
	// SettingLocalBaseURL is the settings key (a JSON string) of the
	// endpoint chosen by the owner; it wins over EnvLocalBase.
	SettingLocalBaseURL = "local_base_url"
)

// IsLocal reports whether model names a local model.
func IsLocal(model string) bool { return strings.HasPrefix(model, LocalPrefix) }

// LocalName returns the name the endpoint knows model by: model without
// LocalPrefix.
func LocalName(model string) string { return strings.TrimPrefix(model, LocalPrefix) }

// ErrNoLocalEndpoint says a local model was asked for while no endpoint is
// configured.
var ErrNoLocalEndpoint = errors.New("no local model endpoint: set " + EnvLocalBase + " (for example http://127.0.0.1:11434/v1 for Ollama) or `aos settings set --local-base-url`")

// LocalBaseURL returns the endpoint of local models: setting (the owner's
// choice, from the settings table) when it is not empty, else the
// environment's EnvLocalBase; "" when neither is set.
func LocalBaseURL(setting string, getenv func(string) string) string {
	if setting != "" {
		return setting
	}
	if getenv == nil {
		return ""
	}
	return strings.TrimSpace(getenv(EnvLocalBase))
}

// CheckLocalBaseURL validates an endpoint's base URL: an absolute http or
// https URL with a host, no credentials (a key goes in EnvLocalKey), no
// query or fragment. The error says what is wrong, never the URL's
// userinfo.
func CheckLocalBaseURL(raw string) error {
	if len(raw) > 2048 {
		return errors.New("the local base URL is longer than 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("the local base URL is not a URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("the local base URL must start with http:// or https://")
	case u.Host == "" || u.Hostname() == "":
		return errors.New("the local base URL has no host")
	case u.User != nil:
		return errors.New("the local base URL must not hold credentials: put a key in " + EnvLocalKey)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return errors.New("the local base URL must not have a query or fragment")
	}
	return nil
}

// EnvLocalPrices prices local models, which cost 0 otherwise:
// "NAME=INPUT/OUTPUT" entries, comma-separated, in USD per million tokens
// ("qwen3-coder=0.2/0.8"), NAME as the endpoint knows it.
const EnvLocalPrices = "AOS_LOCAL_PRICES"

// ParseLocalPrices parses an EnvLocalPrices value into priced local
// models ("local:NAME"). A priced model is taken to call tools.
func ParseLocalPrices(s string) ([]ModelInfo, error) {
	var out []ModelInfo
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, price, ok := strings.Cut(f, "=")
		in, outp, ok2 := strings.Cut(price, "/")
		name = strings.TrimPrefix(strings.TrimSpace(name), LocalPrefix)
		if !ok || !ok2 || name == "" {
			return nil, fmt.Errorf("%s: want NAME=INPUT/OUTPUT (USD per million tokens), got %q", EnvLocalPrices, f)
		}
		pi, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
		po, err2 := strconv.ParseFloat(strings.TrimSpace(outp), 64)
		if err1 != nil || err2 != nil || pi < 0 || po < 0 || pi > 1e4 || po > 1e4 || math.IsNaN(pi) || math.IsNaN(po) {
			return nil, fmt.Errorf("%s: %s: prices must be numbers from 0 to 10000", EnvLocalPrices, name)
		}
		out = append(out, ModelInfo{ID: LocalPrefix + name, Provider: Compat, Tier: TierLocal, Price: Price{Input: pi, Output: po}, Tools: true})
	}
	return out, nil
}
