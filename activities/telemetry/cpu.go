package telemetry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// procStat is the kernel's CPU accounting file.
const procStat = "/proc/stat"

// cpuTimes is the aggregate "cpu" line of /proc/stat reduced to the two
// sums that utilisation needs, in clock ticks since boot.
type cpuTimes struct {
	busy, idle uint64
}

// Field positions on a "cpu" line after the label, as documented in proc(5).
const (
	fieldUser = iota
	fieldNice
	fieldSystem
	fieldIdle
	fieldIOWait
	fieldIRQ
	fieldSoftIRQ
	fieldSteal
	// guest and guest_nice follow; they are part of user and nice already.
	cpuFields = fieldSteal + 1
)

// parseProcStat reads the aggregate "cpu" line (the one without a core
// number) of a /proc/stat listing. Kernels older than 2.6.11 print fewer
// fields; missing fields count as zero, but user, nice, system and idle
// must be there.
func parseProcStat(r io.Reader) (cpuTimes, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "cpu" {
			continue
		}
		vals := fields[1:]
		if len(vals) < fieldIdle+1 {
			return cpuTimes{}, fmt.Errorf("parse /proc/stat: cpu line has %d fields, want at least %d", len(vals), fieldIdle+1)
		}
		var v [cpuFields]uint64
		for i := 0; i < cpuFields && i < len(vals); i++ {
			n, err := strconv.ParseUint(vals[i], 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("parse /proc/stat: cpu field %d: %w", i+1, err)
			}
			v[i] = n
		}
		return cpuTimes{
			busy: v[fieldUser] + v[fieldNice] + v[fieldSystem] + v[fieldIRQ] + v[fieldSoftIRQ] + v[fieldSteal],
			idle: v[fieldIdle] + v[fieldIOWait],
		}, nil
	}
	if err := sc.Err(); err != nil {
		return cpuTimes{}, fmt.Errorf("parse /proc/stat: %w", err)
	}
	return cpuTimes{}, errors.New("parse /proc/stat: no aggregate cpu line")
}

// readCPUTimes reads and parses the file at path.
func readCPUTimes(path string) (cpuTimes, error) {
	f, err := os.Open(path)
	if err != nil {
		return cpuTimes{}, fmt.Errorf("read cpu times: %w", err)
	}
	defer f.Close()
	return parseProcStat(f)
}

// cpuUtil is the busy share of the ticks between two readings, in [0, 1].
// It returns NaN when no tick elapsed or the counters went backwards (a
// CPU taken offline removes its ticks from the sums).
func cpuUtil(prev, cur cpuTimes) float64 {
	if cur.busy < prev.busy || cur.idle < prev.idle {
		return math.NaN()
	}
	busy, idle := cur.busy-prev.busy, cur.idle-prev.idle
	if busy+idle == 0 {
		return math.NaN()
	}
	return float64(busy) / float64(busy+idle)
}
