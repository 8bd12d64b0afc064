package wire

// Model is a model as the API shows it: the catalogue's data merged with
// the provider's live list.
type Model struct {
	ID            string `json:"id"`
	Provider      string `json:"provider"`
	Tier          string `json:"tier,omitempty"`
	Label         string `json:"label,omitempty"`
	Price         Price  `json:"price"`
	ContextWindow int64  `json:"contextWindow,omitempty"`
	// Available is null when it is not known: no key for the provider, or
	// its model list could not be read. aos never guesses it.
	Available *bool  `json:"available"`
	Note      string `json:"note,omitempty"`
}
