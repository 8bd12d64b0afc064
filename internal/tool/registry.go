package tool

import (
	"fmt"
	"os/exec"
)

// Registry holds tools by name in a fixed order.
type Registry struct {
	tools  []Tool
	byName map[string]Tool
}

// NewRegistry returns a registry of tools in the given order; duplicate
// names are an error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range tools {
		if _, dup := r.byName[t.Name()]; dup {
			return nil, fmt.Errorf("tool: duplicate tool %q", t.Name())
		}
		r.byName[t.Name()] = t
		r.tools = append(r.tools, t)
	}
	return r, nil
}

// Default returns every tool in the order the model sees them. Search uses
// ripgrep when it is in PATH.
func Default() *Registry {
	rg, _ := exec.LookPath("rg")
	r, err := NewRegistry(
		ReadFile(), ListDir(), Search(rg), EditFile(), WriteFile(), Shell(),
		GitStatus(), GitDiff(), GitCommit(), GitPush(), ReadArtifact{},
		AskOwner(), UpdateCriteria(), ProposeCriteria(), Finish(),
	)
	if err != nil {
		panic(err) // the list above has unique names
	}
	return r
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// All returns the tools in registration order.
func (r *Registry) All() []Tool { return append([]Tool(nil), r.tools...) }

// Names returns the tool names in registration order.
func (r *Registry) Names() []string {
	n := make([]string, len(r.tools))
	for i, t := range r.tools {
		n[i] = t.Name()
	}
	return n
}
