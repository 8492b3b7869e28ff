package tabletop

import (
	"slices"
	"strings"
)

// Special tokens, first in the vocabulary.
const (
	TokenPad = 0 // <pad>
	TokenBOS = 1 // <bos>
	TokenEOS = 2 // <eos>
	TokenUnk = 3 // <unk>
)

var vocab, vocabIndex = buildVocab()

// buildVocab lists the specials, then every word of every instruction of
// every suite, sorted and deduplicated.
func buildVocab() ([]string, map[string]int) {
	var words []string
	for _, s := range suites {
		for _, t := range s.tasks {
			words = append(words, strings.Fields(t.instruction)...)
		}
	}
	slices.Sort(words)
	words = slices.Compact(words)
	v := append([]string{"<pad>", "<bos>", "<eos>", "<unk>"}, words...)
	idx := make(map[string]int, len(v))
	for i, w := range v {
		idx[w] = i
	}
	return v, idx
}

// Vocabulary returns the word vocabulary of all suites' instructions:
// <pad> (0), <bos>, <eos>, <unk>, then the words sorted. It is the same in
// every run.
func Vocabulary() []string { return slices.Clone(vocab) }

// Tokenize returns <bos>, the ids of text's space-separated lowercase
// words (<unk> for words outside the vocabulary), <eos>.
func Tokenize(text string) []int {
	out := []int{TokenBOS}
	for _, w := range strings.Fields(strings.ToLower(text)) {
		id, ok := vocabIndex[w]
		if !ok {
			id = TokenUnk
		}
		out = append(out, id)
	}
	return append(out, TokenEOS)
}
