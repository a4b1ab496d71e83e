package sim

import "strconv"

// Time is an instant of virtual time: nanoseconds since the world started.
// Invariant: the world's clock never moves backwards.
type Time int64

// Duration is a span of virtual time in nanoseconds.
type Duration int64

// Units of virtual time.
const (
	Nanosecond  Duration = 1
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
	Minute               = 60 * Second
	Hour                 = 60 * Minute
)

// Add returns t+d.
func (t Time) Add(d Duration) Time { return t + Time(d) }

// Sub returns t-u.
func (t Time) Sub(u Time) Duration { return Duration(t - u) }

// String renders t as the time since the start, e.g. "1.250ms".
func (t Time) String() string { return Duration(t).String() }

// Milliseconds returns d in whole milliseconds, the unit of Kafka's *.ms properties.
func (d Duration) Milliseconds() int64 { return int64(d / Millisecond) }

// Ms converts a Kafka *.ms property value to a Duration.
func Ms(ms int64) Duration { return Duration(ms) * Millisecond }

// String renders d with three decimals in the largest unit that fits:
// "0s", "750ns", "12.500µs", "1.250ms", "3.000s". The format is fixed so that
// traces and golden files never depend on the platform.
func (d Duration) String() string {
	if d == 0 {
		return "0s"
	}
	neg := d < 0
	if neg {
		d = -d
	}
	var unit string
	var div Duration
	switch {
	case d < Microsecond:
		s := strconv.FormatInt(int64(d), 10) + "ns"
		if neg {
			return "-" + s
		}
		return s
	case d < Millisecond:
		unit, div = "µs", Microsecond
	case d < Second:
		unit, div = "ms", Millisecond
	default:
		unit, div = "s", Second
	}
	whole := int64(d / div)
	frac := int64(d%div) * 1000 / int64(div)
	b := make([]byte, 0, 24)
	if neg {
		b = append(b, '-')
	}
	b = strconv.AppendInt(b, whole, 10)
	b = append(b, '.')
	if frac < 100 {
		b = append(b, '0')
	}
	if frac < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, frac, 10)
	b = append(b, unit...)
	return string(b)
}
