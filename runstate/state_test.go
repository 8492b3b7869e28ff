package runstate

import (
	"testing"
	"time"

	"github.com/accerl/accerl/specs"
)

// The behaviour-cloning warm start runs once; its demonstrations and success survive every
// segment's counters, which know nothing of them, and the plan carries its checkpoint.
func TestPolicyPretrainState(t *testing.T) {
	cfg := specs.DefaultConfig()
	m := New(cfg)
	if m.NeedsPolicyPretrain(State{}) {
		t.Fatal("a spec without a pretrain block needs no warm start")
	}
	cfg.Pretrain = specs.DefaultPretrain()
	m = New(cfg)
	st := m.Start(State{}, time.Unix(0, 0))
	if !m.NeedsPolicyPretrain(st) {
		t.Fatal("a spec with a pretrain block needs the warm start")
	}
	st = m.ApplyPolicyPretrain(st, PolicyPretrained{DemoSteps: 900, PolicyState: "/r/bc/final", Success: 0.45, HasSuccess: true})
	if m.NeedsPolicyPretrain(st) || m.Next(st).PolicyState != "/r/bc/final" {
		t.Fatalf("after the warm start: needs it again %v, plan %+v", m.NeedsPolicyPretrain(st), m.Next(st))
	}
	st = m.Apply(st, SegmentResult{Counters: Counters{Segment: 1, EnvSteps: 100, EvalSuccess: 0.6, HasEvalSuccess: true, HasEval: true}})
	if st.DemoSteps != 900 || st.PretrainSuccess != 0.45 || !st.HasPretrainSuccess || st.EvalSuccess != 0.6 {
		t.Errorf("after a segment: %+v", st.Counters)
	}
}
