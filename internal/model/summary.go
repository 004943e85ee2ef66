package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// DecodeRequestSummary decodes what a scripted endpoint checks of a
// request: whether it streams, the names of the tools offered and the last
// message (the returned Request holds only that one). The rest of the
// conversation, which a client re-sends every turn, is skipped.
//
// Most of a request is tool schemas and earlier messages that are only
// skipped, and encoding/json reads every byte twice through its general
// state machine. So a request is first read by scanSummary, a strict
// reader of just this shape; anything it is not sure of (invalid JSON, a
// key that encoding/json would match without regard to case, a repeated
// field, a value of an unexpected type) goes to the encoding/json path,
// which gives the same answer or the error. FuzzRequestSummary holds the
// two paths to the same results.
func DecodeRequestSummary(body []byte) (Request, error) {
	stream, last, n, names, ok := scanSummary(body)
	if !ok {
		return decodeSummaryJSON(body)
	}
	return summary(stream, last, n, names)
}

// decodeSummaryJSON is DecodeRequestSummary through encoding/json.
func decodeSummaryJSON(body []byte) (Request, error) {
	var w struct {
		Stream   bool              `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, fmt.Errorf("request body is not a chat completion request: %w", err)
	}
	var last []byte
	n := len(w.Messages)
	if n > 0 {
		last = w.Messages[n-1]
	}
	names := make([]string, 0, len(w.Tools))
	for _, t := range w.Tools {
		names = append(names, t.Function.Name)
	}
	return summary(w.Stream, last, n, names)
}

// summary makes the Request of a summary from its parts: last is the raw
// last of n messages, nil when there is none.
func summary(stream bool, last []byte, n int, names []string) (Request, error) {
	req := Request{Stream: stream}
	if last != nil {
		var m wireMessage
		if err := json.Unmarshal(last, &m); err != nil {
			return Request{}, fmt.Errorf("request body is not a chat completion request: messages[%d]: %w", n-1, err)
		}
		msg := Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = []Message{msg}
	}
	for _, n := range names {
		req.Tools = append(req.Tools, ToolSpec{Name: n})
	}
	return req, nil
}

// scanSummary reads a request of the usual shape: an object whose
// "stream" is a boolean, whose "messages" is a list (only the last element
// is kept, raw) and whose "tools" is a list of objects with a "function"
// object with a string "name". ok is false when the body is not valid JSON
// or when anything in it is outside that shape.
func scanSummary(body []byte) (stream bool, last []byte, n int, names []string, ok bool) {
	s := scanner{b: body}
	seen := 0 // bits of the fields seen, so that a repeated one is left to encoding/json
	ok = s.object(func(key []byte) bool {
		bit := 0
		switch string(key) {
		case "stream":
			bit = 1
		case "messages":
			bit = 2
		case "tools":
			bit = 4
		default:
			return s.skipField(key, "stream", "messages", "tools")
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch bit {
		case 1:
			return s.boolean(&stream)
		case 2:
			if !s.peek('[') {
				return false
			}
			return s.array(func() bool {
				start := s.i
				if !s.value() {
					return false
				}
				last, n = body[start:s.i], n+1
				return true
			})
		default: // tools
			if !s.peek('[') {
				return false
			}
			names = []string{}
			return s.array(func() bool {
				name, ok := s.tool()
				names = append(names, name)
				return ok
			})
		}
	})
	if !ok {
		return false, nil, 0, nil, false
	}
	s.space()
	return stream, last, n, names, s.i == len(body)
}

// tool reads {"function": {"name": "…"}} (other keys are skipped).
func (s *scanner) tool() (name string, ok bool) {
	if !s.peek('{') {
		return "", false
	}
	seenFunction := false
	ok = s.object(func(key []byte) bool {
		if string(key) != "function" {
			return s.skipField(key, "function")
		}
		if seenFunction || !s.peek('{') {
			return false
		}
		seenFunction = true
		seenName := false
		return s.object(func(key []byte) bool {
			if string(key) != "name" {
				return s.skipField(key, "name")
			}
			if seenName {
				return false
			}
			seenName = true
			var isString bool
			name, isString = s.text()
			return isString
		})
	})
	return name, ok
}

// maxScanDepth bounds the nesting scanSummary follows; deeper bodies go to
// encoding/json, which has its own limit.
const maxScanDepth = 1000

// scanner is a strict JSON reader over b from i (RFC 8259: no trailing
// commas, no leading zeros, no control characters in strings).
type scanner struct {
	b     []byte
	i     int
	depth int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips white space and reports whether the next byte is c.
func (s *scanner) peek(c byte) bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == c
}

func (s *scanner) eat(c byte) bool {
	if s.peek(c) {
		s.i++
		return true
	}
	return false
}

// object reads an object, calling field for each key with s just before
// the key's value, which field must read.
func (s *scanner) object(field func(key []byte) bool) bool {
	return s.collection('{', '}', func() bool {
		key, plain := s.str()
		return plain && s.eat(':') && field(key)
	})
}

// skipField skips the value of a key that is none of known. A key
// encoding/json could still match to one of them (it matches without
// regard to case, with Unicode's folding) is not skipped: ok is false.
func (s *scanner) skipField(key []byte, known ...string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for _, k := range known {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return s.value()
}

// array reads a list, calling elem with s just before each element, which
// elem must read.
func (s *scanner) array(elem func() bool) bool { return s.collection('[', ']', elem) }

// collection reads an object or a list between open and close, calling
// elem for each member with s at its start.
func (s *scanner) collection(open, close byte, elem func() bool) bool {
	if !s.eat(open) || !s.deeper() {
		return false
	}
	defer func() { s.depth-- }()
	if s.eat(close) {
		return true
	}
	for {
		s.space()
		if !elem() {
			return false
		}
		if s.eat(close) {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

func (s *scanner) deeper() bool {
	s.depth++
	return s.depth <= maxScanDepth
}

func (s *scanner) boolean(v *bool) bool {
	s.space()
	switch {
	case s.literal("true"):
		*v = true
	case s.literal("false"):
		*v = false
	default:
		return false
	}
	return true
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// text reads a string value as encoding/json decodes it.
func (s *scanner) text() (string, bool) {
	s.space()
	start := s.i
	v, plain := s.str()
	if plain {
		return string(v), true
	}
	if s.i == start {
		return "", false // not a string
	}
	var out string
	if err := json.Unmarshal(s.b[start:s.i], &out); err != nil {
		return "", false
	}
	return out, true
}

// str reads a string at s.i. plain is true when it was read and holds no
// escapes and only valid UTF-8, so that v (its bytes between the quotes)
// is exactly its decoding; a valid string that is not plain is still
// skipped (v is then nil). An invalid one leaves s.i where it was.
func (s *scanner) str() (v []byte, plain bool) {
	start := s.i
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	s.i++
	// Most strings hold no escape: find the closing quote at once.
	if j := bytes.IndexByte(s.b[s.i:], '"'); j >= 0 {
		raw := s.b[s.i : s.i+j]
		if bytes.IndexByte(raw, '\\') < 0 {
			var hi byte
			for _, c := range raw {
				if c < 0x20 {
					s.i = start
					return nil, false
				}
				hi |= c
			}
			s.i += j + 1
			if hi >= utf8.RuneSelf && !utf8.Valid(raw) {
				return nil, false
			}
			return raw, true
		}
	}
	escaped, ascii := false, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			raw := s.b[start+1 : s.i-1]
			if escaped || (!ascii && !utf8.Valid(raw)) {
				return nil, false
			}
			return raw, true
		case c < 0x20:
			s.i = start
			return nil, false
		case c == '\\':
			escaped = true
			if !s.escape() {
				s.i = start
				return nil, false
			}
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			s.i++
		}
	}
	s.i = start
	return nil, false
}

// escape reads one escape sequence at s.i.
func (s *scanner) escape() bool {
	if s.i+1 >= len(s.b) {
		return false
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		if s.i+6 > len(s.b) {
			return false
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if !isHex(h) {
				return false
			}
		}
		s.i += 6
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// value skips one value of any kind.
func (s *scanner) value() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(func([]byte) bool { return s.value() })
	case c == '[':
		return s.array(s.value)
	case c == '"':
		start := s.i
		s.str()
		return s.i > start
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
