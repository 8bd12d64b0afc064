package openai_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/openai"
)

// TestLive talks to the real API on the volume model. It runs only with
// AOS_LIVE_TESTS=1 and OPENAI_API_KEY set, and is skipped otherwise.
func TestLive(t *testing.T) {
	if os.Getenv("AOS_LIVE_TESTS") != "1" {
		t.Skip("set AOS_LIVE_TESTS=1 to call the real API")
	}
	if os.Getenv(provider.EnvOpenAIKey) == "" {
		t.Skip("OPENAI_API_KEY is not set")
	}
	const model = "gpt-6-luna"
	a := openai.New(provider.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("models", func(t *testing.T) {
		ms, err := a.ListModels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.Tier != "" {
				t.Logf("%-20s available=%v", m.ID, m.Available)
			}
		}
	})
	t.Run("text", func(t *testing.T) {
		resp, err := a.Call(ctx, provider.Request{Model: model, Effort: provider.EffortLow, MaxOutputTokens: 2000,
			System: "Answer in one word.", Transcript: a.InitTranscript("Say hello.")})
		if err != nil {
			t.Fatal(err)
		}
		if p := a.Price(model, resp.Usage); resp.Usage.OutputTokens == 0 || p <= 0 {
			t.Errorf("usage %+v price %v", resp.Usage, p)
		}
	})
	t.Run("tool round trip", func(t *testing.T) {
		tool := provider.ToolDef{Name: "get_time", Description: "Returns the current time.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string"}},"required":["zone"],"additionalProperties":false}`)}
		tr := a.InitTranscript("What time is it in UTC? Use the tool.")
		req := provider.Request{Model: model, Effort: provider.EffortLow, MaxOutputTokens: 2000, Tools: []provider.ToolDef{tool}, Transcript: tr}
		resp, err := a.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.ToolCalls()
		if len(calls) == 0 {
			t.Fatalf("no tool call: %+v", resp.Blocks)
		}
		req.Transcript = a.AppendToolResults(provider.Append(tr, resp.Native), []provider.ToolResult{{CallID: calls[0].ID, Content: "12:00"}})
		resp2, err := a.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		total := resp.Usage.Add(resp2.Usage)
		if p := a.Price(model, total); total.OutputTokens == 0 || p <= 0 {
			t.Errorf("usage %+v price %v", total, p)
		}
	})
}
