package tabletop

import (
	"slices"
	"strings"
	"testing"
)

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Suite: "foo"}, `unknown suite "foo" (known: goal, long, object, spatial)`},
		{Config{Suite: "spatial", Tasks: []int{12}}, `task 12 is out of range: suite "spatial" has tasks 0..9`},
		{Config{Suite: "spatial", Tasks: []int{-1}}, `task -1 is out of range: suite "spatial" has tasks 0..9`},
		{Config{Suite: "goal", Tasks: []int{3, 3}}, `task 3 is listed twice`},
		{Config{Suite: "object", ImageSize: 100}, `image size 100 is not a power of two between 16 and 256`},
		{Config{Suite: "object", ImageSize: 512}, `image size 512 is not a power of two between 16 and 256`},
		{Config{Suite: "object", ImageSize: 8}, `image size 8 is not a power of two between 16 and 256`},
		{Config{Suite: "long", Cameras: []string{"top"}}, `unknown camera "top" (known: agentview, wrist)`},
		{Config{Suite: "long", Cameras: []string{"wrist", "wrist"}}, `camera "wrist" is listed twice`},
		{Config{Suite: "long", MaxEpisodeSteps: -1}, `max episode steps must not be negative, got -1`},
	} {
		err := ValidateConfig(c.cfg)
		if err == nil || err.Error() != c.want {
			t.Errorf("ValidateConfig(%+v) = %v, want %q", c.cfg, err, c.want)
		}
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
	for _, size := range []int{0, 16, 32, 64, 128, 256} {
		if err := ValidateImageSize(size); err != nil {
			t.Errorf("image size %d rejected: %v", size, err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	if got := Suites(); !slices.Equal(got, []string{"goal", "long", "object", "spatial"}) {
		t.Errorf("Suites() = %v", got)
	}
	if got := Cameras(); !slices.Equal(got, []string{"agentview", "wrist"}) {
		t.Errorf("Cameras() = %v", got)
	}
	for suite, steps := range map[string]int{"spatial": 220, "object": 280, "goal": 300, "long": 520} {
		if TaskCount(suite) != 10 || MaxSteps(suite) != steps {
			t.Errorf("%s: %d tasks, %d steps; want 10 and %d", suite, TaskCount(suite), MaxSteps(suite), steps)
		}
		e, err := New(Config{Suite: suite})
		if err != nil {
			t.Fatal(err)
		}
		c := e.Config()
		if c.ImageSize != 64 || !slices.Equal(c.Cameras, []string{"agentview", "wrist"}) || len(c.Tasks) != 10 || c.MaxEpisodeSteps != steps {
			t.Errorf("%s defaults: %+v", suite, c)
		}
		if e.ObsDim() != 46 || e.ImageBytesPerStep() != 2*64*64*3 {
			t.Errorf("%s: ObsDim %d, image bytes %d", suite, e.ObsDim(), e.ImageBytesPerStep())
		}
		as := e.ActionSpace()
		if as.N != 0 || as.Dims() != 7 || as.Low[0] != -1 || as.High[6] != 1 {
			t.Errorf("%s: action space %+v", suite, as)
		}
	}
	if TaskCount("foo") != 0 || Instruction("foo", 0) != "" || Instruction("goal", 10) != "" {
		t.Error("unknown suite or task should give zero values")
	}
}

func TestVocabulary(t *testing.T) {
	v := Vocabulary()
	if !slices.Equal(v[:4], []string{"<pad>", "<bos>", "<eos>", "<unk>"}) {
		t.Fatalf("specials = %v", v[:4])
	}
	if !slices.IsSorted(v[4:]) {
		t.Error("words are not sorted")
	}
	// The vocabulary is part of every trained language policy's input; a
	// change of its size or order must be deliberate.
	if len(v) != 72 || v[4] != "alphabet" || v[len(v)-1] != "yellow" {
		t.Errorf("vocabulary has %d entries, first word %q, last %q; want 72, alphabet, yellow", len(v), v[4], v[len(v)-1])
	}
	for _, s := range Suites() {
		for task := range TaskCount(s) {
			toks := Tokenize(Instruction(s, task))
			if toks[0] != TokenBOS || toks[len(toks)-1] != TokenEOS || slices.Contains(toks, TokenUnk) {
				t.Errorf("%s task %d tokens %v", s, task, toks)
			}
			words := make([]string, 0, len(toks))
			for _, id := range toks[1 : len(toks)-1] {
				words = append(words, v[id])
			}
			if strings.Join(words, " ") != Instruction(s, task) {
				t.Errorf("%s task %d: tokens decode to %q", s, task, strings.Join(words, " "))
			}
		}
	}
	if got := Tokenize("pick up the spaceship"); got[4] != TokenUnk {
		t.Errorf("unknown word gave %v", got)
	}
}

func TestInstructionsDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, s := range Suites() {
		for task := range TaskCount(s) {
			in := Instruction(s, task)
			if prev, ok := seen[in]; ok {
				t.Errorf("%s task %d repeats the instruction of %s", s, task, prev)
			}
			seen[in] = s
		}
	}
}
