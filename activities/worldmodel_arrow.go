package activities

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/accerl/accerl/activities/engine"
)

// Checkpoint files of the world model's buffers. B_img holds engine chunks and is stored
// with the replay buffer's schema (env −1 marks an imagined chunk).
const (
	realFile     = "b_real.arrow"
	imaginedFile = "b_img.arrow"
)

// realTotalKey is the schema metadata key of B_real's run-wide transition count.
const realTotalKey = "accerl.real_total"

// B_real is stored one row per transition, in ring position order [0, held): hist is the
// history window o_{t−k+1..t} (k×d values), act the action in the environment's encoding,
// next o_{t+1}, label the reward model's target (−1 while a success-mode episode runs) and
// term 1 when o_{t+1} is terminal. The schema metadata carries the transitions ever added,
// which places the ring's oldest row.
var realFields = []arrow.Field{
	{Name: "hist", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	{Name: "act", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	{Name: "next", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	{Name: "label", Type: arrow.PrimitiveTypes.Float64},
	{Name: "term", Type: arrow.PrimitiveTypes.Float64},
}

// encodeReal writes wm's B_real as an Arrow IPC file.
func encodeReal(wm *engine.WorldModelSnapshot) ([]byte, error) {
	n := len(wm.RealLabel)
	if n == 0 && (len(wm.RealHist) > 0 || len(wm.RealAct) > 0 || len(wm.RealNext) > 0) ||
		n > 0 && (len(wm.RealTerm) != n || len(wm.RealHist)%n != 0 || len(wm.RealAct)%n != 0 || len(wm.RealNext)%n != 0) {
		return nil, fmt.Errorf("encode B_real: %d labels, %d terminations and %d/%d/%d history/action/next values do not make whole rows",
			n, len(wm.RealTerm), len(wm.RealHist), len(wm.RealAct), len(wm.RealNext))
	}
	meta := arrow.NewMetadata([]string{realTotalKey}, []string{strconv.FormatInt(wm.RealTotal, 10)})
	schema := arrow.NewSchema(realFields, &meta)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	hw, aw, dw := 0, 0, 0
	if n > 0 {
		hw, aw, dw = len(wm.RealHist)/n, len(wm.RealAct)/n, len(wm.RealNext)/n
	}
	for i := range n {
		appendFloats(b.Field(0), wm.RealHist[i*hw:(i+1)*hw])
		appendFloats(b.Field(1), wm.RealAct[i*aw:(i+1)*aw])
		appendFloats(b.Field(2), wm.RealNext[i*dw:(i+1)*dw])
		b.Field(3).(*array.Float64Builder).Append(wm.RealLabel[i])
		b.Field(4).(*array.Float64Builder).Append(wm.RealTerm[i])
	}
	data, err := writeIPC(b, mem)
	if err != nil {
		return nil, fmt.Errorf("encode B_real: %w", err)
	}
	return data, nil
}

// decodeReal reads B_real back into wm.
func decodeReal(data []byte, wm *engine.WorldModelSnapshot) error {
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		return fmt.Errorf("decode B_real: %w", err)
	}
	defer func() { _ = r.Close() }()
	if !arrow.NewSchema(realFields, nil).Equal(arrow.NewSchema(r.Schema().Fields(), nil)) {
		return fmt.Errorf("decode B_real: unexpected schema %v", r.Schema())
	}
	v, ok := r.Schema().Metadata().GetValue(realTotalKey)
	total, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil {
		return fmt.Errorf("decode B_real: schema metadata %s = %q is not a count", realTotalKey, v)
	}
	wm.RealTotal = total
	wm.RealHist, wm.RealAct, wm.RealNext, wm.RealLabel, wm.RealTerm = nil, nil, nil, nil, nil
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return fmt.Errorf("decode B_real: %w", err)
		}
		for row := 0; row < int(rec.NumRows()); row++ {
			wm.RealHist = append(wm.RealHist, floatsAt(rec.Column(0), row)...)
			wm.RealAct = append(wm.RealAct, floatsAt(rec.Column(1), row)...)
			wm.RealNext = append(wm.RealNext, floatsAt(rec.Column(2), row)...)
			wm.RealLabel = append(wm.RealLabel, rec.Column(3).(*array.Float64).Value(row))
			wm.RealTerm = append(wm.RealTerm, rec.Column(4).(*array.Float64).Value(row))
		}
	}
	return nil
}
