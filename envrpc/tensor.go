package envrpc

import (
	"fmt"
	"math"

	pb "github.com/accerl/accerl/envrpc/dmenvrpc"
)

// Tensors of the protocol: constructors for the payloads accerl sends, and readers that
// accept every numerical payload (a Python client may send int32 where we send int64, or
// floats where we send doubles), with dm_env_rpc's broadcasting rule: a payload of one
// element fills the whole shape.

// Doubles is a float64 tensor of the given shape (none: a vector of len(v)).
func Doubles(v []float64, shape ...int32) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Doubles{Doubles: &pb.Tensor_DoubleArray{Array: v}}, Shape: vectorShape(len(v), shape)}
}

// Double is a float64 scalar.
func Double(v float64) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Doubles{Doubles: &pb.Tensor_DoubleArray{Array: []float64{v}}}}
}

// Int64s is an int64 vector.
func Int64s(v ...int64) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Int64S{Int64S: &pb.Tensor_Int64Array{Array: v}}, Shape: []int32{int32(len(v))}}
}

// Int64 is an int64 scalar.
func Int64(v int64) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Int64S{Int64S: &pb.Tensor_Int64Array{Array: []int64{v}}}}
}

// Uint64 is a uint64 scalar.
func Uint64(v uint64) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Uint64S{Uint64S: &pb.Tensor_Uint64Array{Array: []uint64{v}}}}
}

// Bytes is a uint8 tensor of the given shape (none: a vector of len(b)).
func Bytes(b []byte, shape ...int32) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Uint8S{Uint8S: &pb.Tensor_Uint8Array{Array: b}}, Shape: vectorShape(len(b), shape)}
}

// Bool is a bool scalar.
func Bool(v bool) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Bools{Bools: &pb.Tensor_BoolArray{Array: []bool{v}}}}
}

// String is a string scalar.
func String(s string) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Strings{Strings: &pb.Tensor_StringArray{Array: []string{s}}}}
}

// Strings is a string vector.
func Strings(v ...string) *pb.Tensor {
	return &pb.Tensor{Payload: &pb.Tensor_Strings{Strings: &pb.Tensor_StringArray{Array: v}}, Shape: []int32{int32(len(v))}}
}

func vectorShape(n int, shape []int32) []int32 {
	if len(shape) == 0 {
		return []int32{int32(n)}
	}
	return shape
}

// elements is the number of elements a tensor of this shape holds given a payload of n: the
// product of the dimensions (one negative dimension is inferred from n), 1 for a scalar.
func elements(shape []int32, n int) (int, error) {
	size, infer := 1, -1
	for i, d := range shape {
		switch {
		case d < 0 && infer >= 0:
			return 0, fmt.Errorf("shape %v has more than one negative dimension", shape)
		case d < 0:
			infer = i
		default:
			size *= int(d)
		}
	}
	if infer >= 0 {
		if size == 0 || n%size != 0 {
			return 0, fmt.Errorf("shape %v does not fit %d elements", shape, n)
		}
		return n, nil
	}
	if n != size && n != 1 {
		return 0, fmt.Errorf("shape %v holds %d elements, the payload has %d", shape, size, n)
	}
	return size, nil
}

// broadcast returns v as a tensor of shape's size: v itself, or its one element repeated.
func broadcast[T any](v []T, shape []int32) ([]T, error) {
	n, err := elements(shape, len(v))
	if err != nil {
		return nil, err
	}
	if len(v) == n {
		return v, nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = v[0]
	}
	return out, nil
}

func convert[T int32 | int64 | uint32 | uint64 | float32 | float64 | byte | int8](v []T, shape []int32) ([]float64, error) {
	v, err := broadcast(v, shape)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out, nil
}

// AsFloat64s reads a numerical tensor as float64s, row-major. Integers beyond 2⁵³ lose
// precision, as they would in NumPy.
func AsFloat64s(t *pb.Tensor) ([]float64, error) {
	if t == nil {
		return nil, fmt.Errorf("missing tensor")
	}
	switch p := t.Payload.(type) {
	case *pb.Tensor_Doubles:
		return broadcast(p.Doubles.GetArray(), t.Shape)
	case *pb.Tensor_Floats:
		return convert(p.Floats.GetArray(), t.Shape)
	case *pb.Tensor_Int8S:
		v := make([]int8, len(p.Int8S.GetArray()))
		for i, b := range p.Int8S.GetArray() {
			v[i] = int8(b)
		}
		return convert(v, t.Shape)
	case *pb.Tensor_Int32S:
		return convert(p.Int32S.GetArray(), t.Shape)
	case *pb.Tensor_Int64S:
		return convert(p.Int64S.GetArray(), t.Shape)
	case *pb.Tensor_Uint8S:
		return convert(p.Uint8S.GetArray(), t.Shape)
	case *pb.Tensor_Uint32S:
		return convert(p.Uint32S.GetArray(), t.Shape)
	case *pb.Tensor_Uint64S:
		return convert(p.Uint64S.GetArray(), t.Shape)
	}
	return nil, fmt.Errorf("%s tensor is not numerical", payloadName(t))
}

// AsInts reads a tensor of integers (an integer payload, or floats with integral values) as
// ints.
func AsInts(t *pb.Tensor) ([]int, error) {
	v, err := AsFloat64s(t)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(v))
	for i, x := range v {
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return nil, fmt.Errorf("element %d = %v is not an integer", i, x)
		}
		out[i] = int(x)
	}
	return out, nil
}

// AsBytes reads a uint8 (or int8) tensor.
func AsBytes(t *pb.Tensor) ([]byte, error) {
	switch p := t.GetPayload().(type) {
	case *pb.Tensor_Uint8S:
		return broadcast(p.Uint8S.GetArray(), t.Shape)
	case *pb.Tensor_Int8S:
		return broadcast(p.Int8S.GetArray(), t.Shape)
	}
	return nil, fmt.Errorf("%s tensor is not bytes (uint8)", payloadName(t))
}

// AsStrings reads a string tensor.
func AsStrings(t *pb.Tensor) ([]string, error) {
	if p, ok := t.GetPayload().(*pb.Tensor_Strings); ok {
		return broadcast(p.Strings.GetArray(), t.Shape)
	}
	return nil, fmt.Errorf("%s tensor is not strings", payloadName(t))
}

// AsBool reads a bool scalar (or a numerical one: non-zero is true).
func AsBool(t *pb.Tensor) (bool, error) {
	if p, ok := t.GetPayload().(*pb.Tensor_Bools); ok {
		v, err := broadcast(p.Bools.GetArray(), t.Shape)
		if err != nil {
			return false, err
		}
		if len(v) != 1 {
			return false, fmt.Errorf("bool tensor has %d elements, want a scalar", len(v))
		}
		return v[0], nil
	}
	v, err := scalar(t)
	return v != 0, err
}

// scalar reads a numerical scalar.
func scalar(t *pb.Tensor) (float64, error) {
	v, err := AsFloat64s(t)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("tensor has %d elements, want a scalar", len(v))
	}
	return v[0], nil
}

// payloadName names a tensor's payload type for errors.
func payloadName(t *pb.Tensor) string {
	switch t.GetPayload().(type) {
	case nil:
		return "an empty"
	case *pb.Tensor_Floats:
		return "a float"
	case *pb.Tensor_Doubles:
		return "a double"
	case *pb.Tensor_Bools:
		return "a bool"
	case *pb.Tensor_Strings:
		return "a string"
	case *pb.Tensor_Protos:
		return "a proto"
	}
	return "an integer"
}

// newActionTensor is the action tensor a step request carries, in the spec's type.
func newActionTensor(a actionSpec) *pb.Tensor {
	n := a.space.Dims()
	t := &pb.Tensor{}
	if a.space.N == 0 {
		t.Shape = []int32{int32(n)}
	}
	switch a.dtype {
	case pb.DataType_DOUBLE:
		t.Payload = &pb.Tensor_Doubles{Doubles: &pb.Tensor_DoubleArray{Array: make([]float64, n)}}
	case pb.DataType_FLOAT:
		t.Payload = &pb.Tensor_Floats{Floats: &pb.Tensor_FloatArray{Array: make([]float32, n)}}
	case pb.DataType_INT8:
		t.Payload = &pb.Tensor_Int8S{Int8S: &pb.Tensor_Int8Array{Array: make([]byte, n)}}
	case pb.DataType_UINT8:
		t.Payload = &pb.Tensor_Uint8S{Uint8S: &pb.Tensor_Uint8Array{Array: make([]byte, n)}}
	case pb.DataType_INT32:
		t.Payload = &pb.Tensor_Int32S{Int32S: &pb.Tensor_Int32Array{Array: make([]int32, n)}}
	case pb.DataType_UINT32:
		t.Payload = &pb.Tensor_Uint32S{Uint32S: &pb.Tensor_Uint32Array{Array: make([]uint32, n)}}
	case pb.DataType_UINT64:
		t.Payload = &pb.Tensor_Uint64S{Uint64S: &pb.Tensor_Uint64Array{Array: make([]uint64, n)}}
	default:
		t.Payload = &pb.Tensor_Int64S{Int64S: &pb.Tensor_Int64Array{Array: make([]int64, n)}}
	}
	return t
}

// setAction writes action into the reused tensor, converted to its element type.
func setAction(t *pb.Tensor, action []float64) {
	switch p := t.Payload.(type) {
	case *pb.Tensor_Doubles:
		copy(p.Doubles.Array, action)
	case *pb.Tensor_Floats:
		convertInto(p.Floats.Array, action, func(v float64) float32 { return float32(v) })
	case *pb.Tensor_Int8S:
		convertInto(p.Int8S.Array, action, func(v float64) byte { return byte(int8(v)) })
	case *pb.Tensor_Uint8S:
		convertInto(p.Uint8S.Array, action, func(v float64) byte { return byte(v) })
	case *pb.Tensor_Int32S:
		convertInto(p.Int32S.Array, action, func(v float64) int32 { return int32(v) })
	case *pb.Tensor_Uint32S:
		convertInto(p.Uint32S.Array, action, func(v float64) uint32 { return uint32(v) })
	case *pb.Tensor_Uint64S:
		convertInto(p.Uint64S.Array, action, func(v float64) uint64 { return uint64(v) })
	case *pb.Tensor_Int64S:
		convertInto(p.Int64S.Array, action, func(v float64) int64 { return int64(v) })
	}
}

// convertInto writes conv(src[i]) into dst[i].
func convertInto[T any](dst []T, src []float64, conv func(float64) T) {
	for i, v := range src {
		dst[i] = conv(v)
	}
}
