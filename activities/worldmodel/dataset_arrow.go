package worldmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"

	"github.com/accerl/accerl/runstore"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Shard schema metadata keys.
const (
	metaTable        = "accerl.table"
	metaVersion      = "accerl.schema_version"
	metaConfig       = "accerl.collect_config"
	metaFirstEpisode = "accerl.first_episode"
	metaEpisodes     = "accerl.episodes"
	tableName        = "offline_dataset"
)

// Column names of a shard, in order.
const (
	colEpisode    = "episode"
	colT          = "t"
	colObs        = "obs"
	colAction     = "action"
	colReward     = "reward"
	colTerminated = "terminated"
	colTruncated  = "truncated"
	colNextObs    = "next_obs"
	colSuccess    = "success"
)

func shardSchema(cfg CollectConfig, first, n, obsDim int) *arrow.Schema {
	cfgJSON, _ := json.Marshal(cfg) // a struct of strings and integers cannot fail
	md := arrow.NewMetadata(
		[]string{metaTable, metaVersion, metaConfig, metaFirstEpisode, metaEpisodes},
		[]string{tableName, DatasetSchemaVersion, string(cfgJSON), strconv.Itoa(first), strconv.Itoa(n)})
	vec := arrow.FixedSizeListOf(int32(obsDim), arrow.PrimitiveTypes.Float64)
	return arrow.NewSchema([]arrow.Field{
		{Name: colEpisode, Type: arrow.PrimitiveTypes.Int64},
		{Name: colT, Type: arrow.PrimitiveTypes.Int64},
		{Name: colObs, Type: vec},
		{Name: colAction, Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
		{Name: colReward, Type: arrow.PrimitiveTypes.Float64},
		{Name: colTerminated, Type: arrow.FixedWidthTypes.Boolean},
		{Name: colTruncated, Type: arrow.FixedWidthTypes.Boolean},
		{Name: colNextObs, Type: vec},
		{Name: colSuccess, Type: arrow.FixedWidthTypes.Boolean},
	}, &md)
}

// writeShard writes the episodes of ds (all of shard first…first+n−1) as
// one record batch, atomically.
func writeShard(path string, cfg CollectConfig, first, n int, ds *Dataset) error {
	mem := memory.DefaultAllocator
	obsDim := len(ds.Obs) / ds.Len()
	actDim := len(ds.Action) / ds.Len()
	schema := shardSchema(cfg, first, n, obsDim)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ds.Episode, nil)
	b.Field(1).(*array.Int64Builder).AppendValues(ds.T, nil)
	appendVectors(b.Field(2).(*array.FixedSizeListBuilder), ds.Obs, obsDim)
	actions := b.Field(3).(*array.ListBuilder)
	actVals := actions.ValueBuilder().(*array.Float64Builder)
	for i := 0; i < ds.Len(); i++ {
		actions.Append(true)
		actVals.AppendValues(ds.Action[i*actDim:(i+1)*actDim], nil)
	}
	b.Field(4).(*array.Float64Builder).AppendValues(ds.Reward, nil)
	b.Field(5).(*array.BooleanBuilder).AppendValues(ds.Terminated, nil)
	b.Field(6).(*array.BooleanBuilder).AppendValues(ds.Truncated, nil)
	appendVectors(b.Field(7).(*array.FixedSizeListBuilder), ds.NextObs, obsDim)
	b.Field(8).(*array.BooleanBuilder).AppendValues(ds.Success, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	err := runstore.WriteFileAtomic(path, func(f io.Writer) error {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
		if err != nil {
			return err
		}
		if err := w.Write(rec); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
	if err != nil {
		return fmt.Errorf("write shard %q: %w", path, err)
	}
	return nil
}

func appendVectors(b *array.FixedSizeListBuilder, x []float64, d int) {
	vals := b.ValueBuilder().(*array.Float64Builder)
	for i := 0; i < len(x)/d; i++ {
		b.Append(true)
		vals.AppendValues(x[i*d:(i+1)*d], nil)
	}
}

// readShard reads and checks the shard at path (see decodeShard).
func readShard(path string, cfg CollectConfig, first, n, obsDim, actDim int) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeShard(data, cfg, first, n, obsDim, actDim)
}

// decodeShard decodes an IPC file and checks that it is shard (first, n) of
// cfg: metadata, column types and widths, and that it holds episodes first
// … first+n−1 completely, in order, each with t = 0, 1, … and only its last
// step ending the episode.
func decodeShard(data []byte, cfg CollectConfig, first, n, obsDim, actDim int) (*Dataset, error) {
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	want := shardSchema(cfg, first, n, obsDim)
	if err := checkMetadata(r.Schema().Metadata(), want.Metadata()); err != nil {
		return nil, err
	}
	if !r.Schema().Equal(want) {
		return nil, fmt.Errorf("schema %v, want %v", r.Schema(), want)
	}
	ds := &Dataset{}
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			return nil, fmt.Errorf("record batch %d: %w", i, err)
		}
		err = appendRecord(ds, rec, obsDim, actDim)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("record batch %d: %w", i, err)
		}
	}
	if err := checkEpisodes(ds, first, n, obsDim); err != nil {
		return nil, err
	}
	return ds, nil
}

// checkMetadata compares the config-bearing keys; it compares the config
// as decoded JSON, so key order does not matter.
func checkMetadata(got, want arrow.Metadata) error {
	for _, k := range []string{metaTable, metaVersion, metaFirstEpisode, metaEpisodes} {
		g, _ := got.GetValue(k)
		w, _ := want.GetValue(k)
		if g != w {
			return fmt.Errorf("metadata %s is %q, want %q", k, g, w)
		}
	}
	g, _ := got.GetValue(metaConfig)
	w, _ := want.GetValue(metaConfig)
	var gc, wc CollectConfig
	if err := json.Unmarshal([]byte(g), &gc); err != nil {
		return fmt.Errorf("metadata %s: %w", metaConfig, err)
	}
	_ = json.Unmarshal([]byte(w), &wc)
	if !reflect.DeepEqual(gc, wc) {
		return fmt.Errorf("shard was collected with %+v, want %+v", gc, wc)
	}
	return nil
}

func appendRecord(ds *Dataset, rec arrow.RecordBatch, obsDim, actDim int) error {
	rows := int(rec.NumRows())
	ep := rec.Column(0).(*array.Int64)
	ts := rec.Column(1).(*array.Int64)
	obs := rec.Column(2).(*array.FixedSizeList)
	act := rec.Column(3).(*array.List)
	rew := rec.Column(4).(*array.Float64)
	term := rec.Column(5).(*array.Boolean)
	trunc := rec.Column(6).(*array.Boolean)
	next := rec.Column(7).(*array.FixedSizeList)
	succ := rec.Column(8).(*array.Boolean)
	for c := 0; c < int(rec.NumCols()); c++ {
		if rec.Column(c).NullN() != 0 {
			return fmt.Errorf("column %s has nulls", rec.ColumnName(c))
		}
	}
	obsVals := obs.ListValues().(*array.Float64).Float64Values()
	nextVals := next.ListValues().(*array.Float64).Float64Values()
	actVals := act.ListValues().(*array.Float64).Float64Values()
	for i := 0; i < rows; i++ {
		ds.Episode = append(ds.Episode, ep.Value(i))
		ds.T = append(ds.T, ts.Value(i))
		s, e := obs.ValueOffsets(i)
		ds.Obs = append(ds.Obs, obsVals[s:e]...)
		s, e = act.ValueOffsets(i)
		if int(e-s) != actDim {
			return fmt.Errorf("row %d: action has %d values, want %d", i, e-s, actDim)
		}
		ds.Action = append(ds.Action, actVals[s:e]...)
		ds.Reward = append(ds.Reward, rew.Value(i))
		ds.Terminated = append(ds.Terminated, term.Value(i))
		ds.Truncated = append(ds.Truncated, trunc.Value(i))
		s, e = next.ValueOffsets(i)
		ds.NextObs = append(ds.NextObs, nextVals[s:e]...)
		ds.Success = append(ds.Success, succ.Value(i))
	}
	return nil
}

// checkEpisodes verifies the episode structure of a shard.
func checkEpisodes(ds *Dataset, first, n, obsDim int) error {
	want := int64(first)
	for i := 0; i < ds.Len(); i++ {
		start := i == 0 || ds.Episode[i] != ds.Episode[i-1]
		if start {
			if ds.Episode[i] != want {
				return fmt.Errorf("row %d starts episode %d, want episode %d", i, ds.Episode[i], want)
			}
			want++
		}
		if start && ds.T[i] != 0 || !start && ds.T[i] != ds.T[i-1]+1 {
			return fmt.Errorf("row %d of episode %d has t = %d, out of sequence", i, ds.Episode[i], ds.T[i])
		}
		last := i == ds.Len()-1 || ds.Episode[i+1] != ds.Episode[i]
		if ends := ds.Terminated[i] || ds.Truncated[i]; ends != last {
			return fmt.Errorf("row %d of episode %d: ends the episode = %v, but it is the last row = %v", i, ds.Episode[i], ends, last)
		}
		if ds.Success[i] && !last {
			return fmt.Errorf("row %d of episode %d: success is set on a row that does not end the episode", i, ds.Episode[i])
		}
		if !last && !slicesEqual(ds.NextObs[i*obsDim:(i+1)*obsDim], ds.Obs[(i+1)*obsDim:(i+2)*obsDim]) {
			return fmt.Errorf("row %d of episode %d: next_obs differs from the next row's obs", i, ds.Episode[i])
		}
	}
	if got := want - int64(first); got != int64(n) {
		return fmt.Errorf("holds %d episodes, want %d", got, n)
	}
	return nil
}

// slicesEqual compares bit patterns, so that NaN equals NaN.
func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}
