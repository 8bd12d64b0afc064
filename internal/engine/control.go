package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/tool"
)

// acceptCriteria is the answer that accepts proposed criteria.
const acceptCriteria = "Yes — use these criteria"

// control runs an engine-side tool (finish, ask_owner, update_criteria,
// propose_criteria). These have no tool_call step: their effect is the
// loop's state, rebuilt on replay from the model's recorded calls, or a
// journaled wait. done ends the run.
func (l *loop) control(c provider.Block, p *plannedCall) (kernel.Result, bool, error) {
	ok := func(msg string) { p.result = &provider.ToolResult{CallID: c.ID, Name: c.Name, Content: msg} }
	bad := func(msg string) { p.result = refused(c, msg) }
	switch c.Name {
	case "finish":
		var in struct {
			Status        string   `json:"status"`
			Summary       string   `json:"summary"`
			Evidence      []string `json:"evidence"`
			OpenQuestions []string `json:"openQuestions"`
		}
		_ = json.Unmarshal(c.Input, &in)
		if in.Status == tool.FinishDone {
			if missing := l.unmet(); missing != "" {
				bad("finish with status done refused: " + missing + " Call update_criteria with evidence first, or finish with partial, blocked or failed.")
				return kernel.Result{}, false, nil
			}
		}
		return l.end(in.Status, in.Summary, in.Evidence, in.OpenQuestions)
	case "ask_owner":
		var in struct {
			Question string    `json:"question"`
			Options  *[]string `json:"options"`
		}
		_ = json.Unmarshal(c.Input, &in)
		payload := map[string]any{"text": in.Question, "source": "ask_owner"}
		if in.Options != nil {
			payload["options"] = *in.Options
		}
		out, err := l.rc.Wait(kernel.WaitQuestion, payload, l.in.approvalTimeout())
		if err != nil {
			return kernel.Result{}, false, err
		}
		if out.Expired() {
			bad("The owner did not answer in time. Decide without the answer, or finish blocked.")
		} else {
			ok("The owner answered: " + answerOrRaw(out.Resolution))
		}
	case "update_criteria":
		var in struct {
			Updates []struct {
				ID       string `json:"id"`
				Passes   bool   `json:"passes"`
				Evidence string `json:"evidence"`
			} `json:"updates"`
		}
		_ = json.Unmarshal(c.Input, &in)
		for _, u := range in.Updates {
			if l.criterion(u.ID) == nil {
				bad(fmt.Sprintf("no criterion %q; the criteria are: %s", u.ID, l.criteriaList()))
				return kernel.Result{}, false, nil
			}
		}
		for _, u := range in.Updates {
			cr := l.criterion(u.ID)
			cr.Passes, cr.Evidence = u.Passes, u.Evidence
		}
		if err := l.rc.Emit("system.notice", map[string]any{"code": "criteria", "message": "Criteria updated.", "doneCriteria": l.criteria}); err != nil {
			return kernel.Result{}, false, err
		}
		ok("Criteria updated: " + l.criteriaList())
	case "propose_criteria":
		if l.confirmed {
			bad("The done criteria are already confirmed: " + l.criteriaList())
			return kernel.Result{}, false, nil
		}
		var in struct {
			Criteria []struct {
				Text string `json:"text"`
			} `json:"criteria"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(c.Input, &in)
		var proposed []string
		var b strings.Builder
		b.WriteString("The agent proposes these done criteria:\n")
		for i, cr := range in.Criteria {
			proposed = append(proposed, cr.Text)
			fmt.Fprintf(&b, "%d. %s\n", i+1, cr.Text)
		}
		out, err := l.rc.Wait(kernel.WaitQuestion, map[string]any{"text": b.String(), "detail": in.Detail, "options": []string{acceptCriteria},
			"source": "propose_criteria", "proposed": proposed}, l.in.approvalTimeout())
		if err != nil {
			return kernel.Result{}, false, err
		}
		ans := answerOrRaw(out.Resolution)
		if out.Expired() || ans != acceptCriteria {
			if out.Expired() {
				ans = "(no answer before the deadline)"
			}
			bad("The owner did not accept these criteria. Their reply: " + ans + ". Revise and propose again.")
			return kernel.Result{}, false, nil
		}
		l.criteria = nil
		for i, t := range proposed {
			l.criteria = append(l.criteria, Criterion{ID: fmt.Sprintf("c%d", i+1), Text: t})
		}
		l.confirmed = true
		if err := l.rc.Emit("system.notice", map[string]any{"code": "criteria", "message": "The owner confirmed the done criteria.", "doneCriteria": l.criteria}); err != nil {
			return kernel.Result{}, false, err
		}
		ok("The owner confirmed the criteria: " + l.criteriaList() + ". You may now make changes.")
	}
	return kernel.Result{}, false, nil
}

func answerOrRaw(res json.RawMessage) string {
	if a := answerText(res); a != "" {
		return a
	}
	return string(res)
}

func (l *loop) criterion(id string) *Criterion {
	for i := range l.criteria {
		if l.criteria[i].ID == id {
			return &l.criteria[i]
		}
	}
	return nil
}

func (l *loop) criteriaList() string {
	if len(l.criteria) == 0 {
		return "(none yet)"
	}
	var parts []string
	for _, c := range l.criteria {
		mark := "not passing"
		if c.Passes {
			mark = "passes"
		}
		parts = append(parts, fmt.Sprintf("[%s] %s (%s)", c.ID, c.Text, mark))
	}
	return strings.Join(parts, "; ")
}

// unmet says which criteria keep status done from being allowed, or "".
func (l *loop) unmet() string {
	if !l.confirmed || len(l.criteria) == 0 {
		return "there are no confirmed done criteria."
	}
	var miss []string
	for _, c := range l.criteria {
		if !c.Passes || strings.TrimSpace(c.Evidence) == "" {
			miss = append(miss, c.ID)
		}
	}
	if len(miss) > 0 {
		return "criteria " + strings.Join(miss, ", ") + " do not pass with evidence."
	}
	return ""
}
