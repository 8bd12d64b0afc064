package provider_test

import (
	"testing"

	"github.com/aos-run/aos/internal/provider"
)

// TestPriceHandComputed checks every catalogue model against figures
// computed by hand for 1,234,567 input, 89,012 output, 3,456,789 cache-read
// and 123,456 cache-write tokens.
//
//	cost = (in×pin + out×pout + cr×pcr + cw×pcw) / 1e6
func TestPriceHandComputed(t *testing.T) {
	t.Parallel()
	u := provider.Usage{InputTokens: 1_234_567, OutputTokens: 89_012, CacheReadTokens: 3_456_789, CacheWriteTokens: 123_456}
	want := map[string]float64{
		// 1234567×8 + 89012×40 + 3456789×0.20 + 123456×10 = 9876536 + 3560480 + 691357.8 + 1234560 = 15362933.8
		"claude-fable-5-2": 15.3629338,
		// ×4, ×20, ×0.20, ×5: 4938268 + 1780240 + 691357.8 + 617280 = 8027145.8
		"claude-opus-5-5": 8.0271458,
		// ×2, ×10, ×0.10, ×2.5: 2469134 + 890120 + 345678.9 + 308640 = 4013572.9
		"claude-sonnet-5-5": 4.0135729,
		// ×0.10, ×0.50, ×0.01, ×0.125: 123456.7 + 44506 + 34567.89 + 15432 = 217962.59
		"claude-haiku-5-5": 0.21796259,
		// ×10, ×50, ×1.00, ×10: 12345670 + 4450600 + 3456789 + 1234560 = 21487619
		"gpt-6-astra": 21.487619,
		// ×2, ×10, ×0.10, ×2: 2469134 + 890120 + 345678.9 + 246912 = 3951844.9
		"gpt-6.1-sol": 3.9518449,
		// ×1, ×5, ×0.05, ×1: 1234567 + 445060 + 172839.45 + 123456 = 1975922.45
		"gpt-6.1-terra": 1.97592245,
		// ×0.10, ×0.50, ×0.01, ×0.10: 123456.7 + 44506 + 34567.89 + 12345.6 = 214876.19
		"gpt-6-luna": 0.21487619,
	}
	book := provider.NewPriceBook()
	cat := provider.Catalogue()
	if len(cat) != 8 {
		t.Fatalf("catalogue has %d models, want 8", len(cat))
	}
	for _, m := range cat {
		w, ok := want[m.ID]
		if !ok {
			t.Errorf("unexpected model %s", m.ID)
			continue
		}
		if got := book.Price(m.ID, u); got != w {
			t.Errorf("%s: %.10f, want %.10f", m.ID, got, w)
		}
	}
	if got := book.Price("unknown", u); got != 0 {
		t.Errorf("unknown model priced %v", got)
	}
	if got := (provider.Price{Input: 0.10}).Cost(provider.Usage{InputTokens: 1_000_000}); got != 0.1 {
		t.Errorf("1M at $0.10 = %v", got)
	}
}

func TestCatalogueDefaults(t *testing.T) {
	t.Parallel()
	defaults := map[provider.ID]string{}
	for _, m := range provider.Catalogue() {
		if m.Default {
			if prev, dup := defaults[m.Provider]; dup {
				t.Errorf("two defaults for %s: %s, %s", m.Provider, prev, m.ID)
			}
			defaults[m.Provider] = m.ID
		}
		if m.Provider == provider.Anthropic && m.Price.CacheWrite != m.Price.Input*1.25 {
			t.Errorf("%s: cache write %v is not 1.25 × input", m.ID, m.Price.CacheWrite)
		}
	}
	if defaults[provider.Anthropic] != "claude-opus-5-5" || defaults[provider.OpenAI] != "gpt-6.1-sol" {
		t.Errorf("defaults = %v", defaults)
	}
	// Catalogue returns a fresh copy: callers cannot change prices.
	c := provider.Catalogue()
	c[0].Price.Input = 999
	if provider.Catalogue()[0].Price.Input == 999 {
		t.Error("catalogue is shared mutable state")
	}
}

func TestMergeModels(t *testing.T) {
	t.Parallel()
	extra := []provider.ModelInfo{{ID: "my-local", Price: provider.Price{Input: 1}}}
	got := provider.MergeModels(provider.Anthropic, []string{"claude-haiku-5-5", "claude-new-6"}, extra)
	byID := map[string]provider.ModelInfo{}
	for _, m := range got {
		byID[m.ID] = m
	}
	if !byID["claude-haiku-5-5"].Available || byID["claude-opus-5-5"].Available {
		t.Errorf("availability: %+v", got)
	}
	if m := byID["claude-new-6"]; !m.Available || m.Price != (provider.Price{}) {
		t.Errorf("live-only model: %+v", m)
	}
	if m := byID["my-local"]; m.Available || m.Provider != provider.Anthropic {
		t.Errorf("extra model: %+v", m)
	}
	if len(got) != 4+1+1 {
		t.Errorf("%d models", len(got))
	}
}

func TestEffortValid(t *testing.T) {
	t.Parallel()
	for e, want := range map[provider.Effort]bool{"": true, "low": true, "xhigh": true, "max": true, "extreme": false, "High": false} {
		if got := e.Valid(); got != want {
			t.Errorf("%q: %v", e, got)
		}
	}
}
