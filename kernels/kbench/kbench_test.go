package kbench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRunSmall runs the driver on two tiny shapes and checks the report's
// shape, JSON and table.
func TestRunSmall(t *testing.T) {
	rep, err := Run(context.Background(), Options{
		Shapes:  []Shape{{Name: "tiny", M: 7, N: 9, K: 5}, {Name: "small-tb", M: 33, N: 40, K: 20, TransB: true}},
		MinTime: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[0].CPU1 <= 0 || rep.Results[1].ReferenceF64 <= 0 || rep.Results[0].SpeedupVsReference <= 0 {
		t.Fatalf("bad report %+v", rep)
	}
	if ok, _ := OpenBLASAvailable(); ok != (rep.Results[0].OpenBLAS1 > 0) {
		t.Fatalf("OpenBLAS measured = %v, available = %v", rep.Results[0].OpenBLAS1 > 0, ok)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"f32_cpu_1core_gflops"`, `"speedup_vs_reference"`, `"name":"tiny"`, `"cuda":`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("JSON lacks %s: %s", key, js)
		}
	}
	var buf bytes.Buffer
	if err := rep.Print(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "small-tb") {
		t.Errorf("table lacks a row:\n%s", buf.String())
	}
}

// TestRunCancelled returns the context's error.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{MinTime: time.Millisecond}); err == nil {
		t.Fatal("want the context's error")
	}
}

// TestWriteReport runs the full default benchmark when ACCERL_KBENCH_OUT
// names a file, and writes the JSON report there and the table to stdout
// (scripts/device-check.sh uses it on the GPU machine; `go test -run
// WriteReport` with the variable set does it here).
func TestWriteReport(t *testing.T) {
	out := os.Getenv("ACCERL_KBENCH_OUT")
	if out == "" {
		t.Skip("set ACCERL_KBENCH_OUT=file to run the full benchmark")
	}
	rep, err := Run(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	t.Log("\n" + buf.String())
}
