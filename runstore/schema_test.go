package runstore

import (
	"bytes"
	"os"
	"testing"
)

// TestSchemaDocumented keeps the column tables in doc.go in step with the
// schema: every column must have its line there.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(MetricsColumns(), EpisodeColumns()...) {
		if !bytes.Contains(doc, []byte("\n//\t"+name+" ")) {
			t.Errorf("doc.go does not document column %q", name)
		}
	}
}
