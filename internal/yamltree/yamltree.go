// Package yamltree reads YAML files that people write (scenario.yaml,
// model.yaml) into go-yaml's node tree.
//
// Parse gives the tree yaml.Unmarshal into a yaml.Node gives, without
// comments. go-yaml's general parser costs tens of microseconds and tens
// of kilobytes even for a ten-line file, which a suite of thousands of
// scenarios pays twice per case; most such files use a small part of YAML
// (block mappings and lists, plain and quoted scalars, literal blocks,
// one-line flow collections). So a file is first read by a strict reader
// of just that part, and anything it is not sure of — anchors, tags,
// folded or multi-line scalars, an empty value, tabs, a document marker,
// odd indentation — is left to go-yaml, which then gives the tree or the
// error with its line and column. FuzzParse holds the two readers to the
// same trees.
package yamltree

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Parse parses the first YAML document of data into a node tree whose root
// is the document node (its Kind is 0 when data holds no document).
// Comments are not kept.
func Parse(data []byte) (yaml.Node, error) {
	if doc, ok := parseCommon(data); ok {
		return doc, nil
	}
	var root yaml.Node
	err := yaml.Unmarshal(data, &root)
	return root, err
}

// parseCommon reads the common part of YAML; ok is false when data is
// outside it (or is not YAML at all).
func parseCommon(data []byte) (doc yaml.Node, ok bool) {
	if !plainText(data) {
		return yaml.Node{}, false
	}
	r := &reader{src: string(data), lines: splitLines(data)}
	for _, l := range r.lines {
		if !l.ascii && len(l.text) > maxWideLine {
			return yaml.Node{}, false // columns would cost a count per node
		}
	}
	r.skipBlank()
	if r.i >= len(r.lines) || r.lines[r.i].indent != 0 {
		return yaml.Node{}, false
	}
	top, ok := r.mapping(0, r.i)
	if !ok {
		return yaml.Node{}, false
	}
	if r.skipBlank(); r.i < len(r.lines) {
		return yaml.Node{}, false // something after the mapping
	}
	return yaml.Node{Kind: yaml.DocumentNode, Line: top.Line, Column: top.Column, Content: r.children(r.push(top))}, true
}

// maxWideLine is the longest line with characters past ASCII read here.
const maxWideLine = 4096

// plainText reports whether data holds only characters the reader takes:
// printable ASCII and newlines, and valid UTF-8 of printable characters
// that YAML does not take for a line break or a byte order mark. Tabs and
// carriage returns are left to go-yaml.
func plainText(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError || r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff {
			return false
		}
		i += size
	}
	return true
}

// line is one line of the file, without its line break.
type line struct {
	num    int    // 1-based
	off    int    // where it starts in the file
	indent int    // leading spaces
	text   []byte // all of it
	last   bool   // the file's last line, with no line break after it
	ascii  bool   // only ASCII: a byte's column is its index plus one
}

func splitLines(data []byte) []line {
	lines := make([]line, 0, bytes.Count(data, []byte{'\n'})+1)
	off := 0
	for num := 1; off < len(data); num++ {
		text, _, found := bytes.Cut(data[off:], []byte{'\n'})
		indent := 0
		for indent < len(text) && text[indent] == ' ' {
			indent++
		}
		ascii := true
		for _, c := range text[indent:] {
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
		}
		lines = append(lines, line{num: num, off: off, indent: indent, text: text, last: !found, ascii: ascii})
		off += len(text) + 1
	}
	return lines
}

// blank reports whether a line holds nothing but spaces or a comment.
func (l line) blank() bool {
	return l.indent == len(l.text) || l.text[l.indent] == '#'
}

type reader struct {
	src   string // the file, whose substrings become values
	lines []line
	i     int // the next line to read
	depth int // collections open

	// Nodes and the lists of children are cut from shared blocks rather
	// than allocated one by one; stack holds the children of the
	// collections being read.
	nodes []yaml.Node
	lists []*yaml.Node
	stack []*yaml.Node
}

// maxDepth is the deepest nesting read here (go-yaml has a limit of its
// own, which deeper files are left to meet).
const maxDepth = 64

// open counts a collection opened and reports whether it is within
// maxDepth; close counts one closed.
func (r *reader) open() bool {
	r.depth++
	return r.depth <= maxDepth
}

func (r *reader) close() { r.depth-- }

// node returns a new node.
func (r *reader) node(kind yaml.Kind, tag string, l *line, at int) *yaml.Node {
	if len(r.nodes) == cap(r.nodes) {
		r.nodes = make([]yaml.Node, 0, 32)
	}
	r.nodes = r.nodes[:len(r.nodes)+1]
	n := &r.nodes[len(r.nodes)-1]
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, l.num, l.column(at)
	return n
}

// push adds children to the stack and returns where they start.
func (r *reader) push(nodes ...*yaml.Node) int {
	r.stack = append(r.stack, nodes...)
	return len(r.stack) - len(nodes)
}

// children pops the stack down to start and returns what it held.
func (r *reader) children(start int) []*yaml.Node {
	n := len(r.stack) - start
	if cap(r.lists)-len(r.lists) < n {
		r.lists = make([]*yaml.Node, 0, max(64, n))
	}
	out := r.lists[len(r.lists) : len(r.lists)+n : len(r.lists)+n]
	copy(out, r.stack[start:])
	r.lists = r.lists[:len(r.lists)+n]
	r.stack = r.stack[:start]
	return out
}

// text is bytes i to j of line l as a string.
func (r *reader) text(l *line, i, j int) string { return r.src[l.off+i : l.off+j] }

// scalar returns a new plain scalar node of l's bytes i to j.
func (r *reader) scalar(l *line, i, j int) *yaml.Node {
	n := r.node(yaml.ScalarNode, "", l, i)
	n.Value = r.text(l, i, j)
	n.Tag = plainTag(n.Value)
	return n
}

// plainTag is the tag YAML resolves a plain scalar to, as go-yaml does it
// (whose resolver takes any scalar that starts with none of these bytes
// for text).
func plainTag(v string) string {
	if v != "" && strings.IndexByte("+-0123456789yYnNtTfFoO~<.", v[0]) < 0 {
		return "!!str"
	}
	n := yaml.Node{Kind: yaml.ScalarNode, Value: v}
	return n.ShortTag()
}

func (r *reader) skipBlank() {
	for r.i < len(r.lines) && r.lines[r.i].blank() {
		r.i++
	}
}

// next is the next line that is not blank, or nil.
func (r *reader) next() *line {
	r.skipBlank()
	if r.i < len(r.lines) {
		return &r.lines[r.i]
	}
	return nil
}

// mapping reads a block mapping whose keys sit at column col (0-based) of
// lines, starting with line first, whose text at col is the first key. In
// a list item ("- key: value") col is past the dash.
func (r *reader) mapping(col, first int) (*yaml.Node, bool) {
	if !r.open() {
		return nil, false
	}
	defer r.close()
	l := &r.lines[first]
	m := r.node(yaml.MappingNode, "!!map", l, col)
	start := len(r.stack)
	r.i = first
	for {
		end, rest, ok := splitKey(l.text, col)
		if !ok {
			return nil, false
		}
		k := r.scalar(l, col, end)
		if k.Tag != "!!str" {
			return nil, false
		}
		r.i++
		v, ok := r.value(l, rest, col)
		if !ok {
			return nil, false
		}
		r.push(k, v)
		next := r.next()
		if next == nil || next.indent < col {
			m.Content = r.children(start)
			return m, true
		}
		if next.indent > col {
			return nil, false // a continuation this reader does not take
		}
		l = next
	}
}

// splitKey splits "key: rest" at col into where the key ends and where
// what follows the colon starts. Keys are plain words.
func splitKey(text []byte, col int) (end, rest int, ok bool) {
	i := col
	for i < len(text) && keyByte(text[i], i == col) {
		i++
	}
	if i == col || i-col > maxKey || i >= len(text) || text[i] != ':' || (i+1 < len(text) && text[i+1] != ' ') {
		return 0, 0, false
	}
	return i, i + 1, true
}

// maxKey is the longest key read here (YAML bounds implicit keys at 1024
// characters).
const maxKey = 256

func keyByte(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		return true
	case '0' <= c && c <= '9', c == '-', c == '.':
		return !first
	}
	return false
}

// value reads the value that starts at byte at of l (after "key:" or
// "- "), or below l when nothing but a comment follows on l. col is the
// column of the key or dash that owns the value.
func (r *reader) value(l *line, at, col int) (*yaml.Node, bool) {
	for at < len(l.text) && l.text[at] == ' ' {
		at++
	}
	if at == len(l.text) || (l.text[at] == '#' && l.text[at-1] == ' ') {
		return r.nested(col, l.indent == col)
	}
	switch c := l.text[at]; c {
	case '|':
		return r.literal(l, at, col)
	case '[', '{', '"', '\'':
		n, end, ok := r.flowNode(l, at)
		if !ok || !restIsComment(l.text, end) {
			return nil, false
		}
		return n, true
	}
	end, ok := plainBlock(l.text, at)
	if !ok {
		return nil, false
	}
	return r.scalar(l, at, end), true
}

// nested reads a value that starts on the lines below its key at column
// col: a mapping deeper than col, or a list deeper than col or at col
// (lineStart: the key starts its line, not "- key:").
func (r *reader) nested(col int, lineStart bool) (*yaml.Node, bool) {
	next := r.next()
	if next == nil {
		return nil, false // an empty value
	}
	dash := isDash(next.text, next.indent)
	switch {
	case dash && (next.indent > col || next.indent == col && lineStart):
		return r.list(next.indent)
	case !dash && next.indent > col:
		return r.mapping(next.indent, r.i)
	}
	return nil, false // an empty value
}

func isDash(text []byte, at int) bool {
	return at < len(text) && text[at] == '-' && (at+1 == len(text) || text[at+1] == ' ')
}

// list reads a block list whose dashes sit at column col, starting at the
// current line.
func (r *reader) list(col int) (*yaml.Node, bool) {
	if !r.open() {
		return nil, false
	}
	defer r.close()
	l := &r.lines[r.i]
	s := r.node(yaml.SequenceNode, "!!seq", l, col)
	start := len(r.stack)
	for {
		at := col + 1
		for at < len(l.text) && l.text[at] == ' ' {
			at++
		}
		if at == len(l.text) || l.text[at] == '#' || l.text[at] == '-' || l.text[at] == '|' {
			return nil, false // a value below the dash, a list in a list, a literal block
		}
		var item *yaml.Node
		var ok bool
		if _, _, isKey := splitKey(l.text, at); isKey {
			item, ok = r.mapping(at, r.i)
		} else {
			r.i++
			item, ok = r.value(l, at, col)
		}
		if !ok {
			return nil, false
		}
		r.push(item)
		next := r.next()
		if next == nil || next.indent < col || (next.indent == col && !isDash(next.text, col)) {
			// (the last: the key after a list at its key's column)
			s.Content = r.children(start)
			return s, true
		}
		if next.indent > col {
			return nil, false
		}
		l = next
	}
}

// restIsComment reports whether text from i holds only spaces and perhaps
// a comment.
func restIsComment(text []byte, i int) bool {
	start := i
	for i < len(text) && text[i] == ' ' {
		i++
	}
	return i == len(text) || (text[i] == '#' && i > start)
}

// plainBlock reads a plain scalar that fills the rest of a line in a block
// from at (up to a comment), as long as it is one YAML reads the same way
// in any block position, and returns where it ends.
func plainBlock(text []byte, at int) (int, bool) {
	if !plainStart(text[at:]) {
		return 0, false
	}
	end := len(text)
	if i := bytes.Index(text[at:], []byte(" #")); i >= 0 {
		end = at + i
	}
	for text[end-1] == ' ' {
		end--
	}
	v := text[at:end]
	if bytes.Contains(v, []byte(": ")) || v[len(v)-1] == ':' || bytes.HasPrefix(v, []byte("<<")) {
		return 0, false
	}
	return end, true
}

// plainStart reports whether a plain scalar may start with text: not with
// an indicator, except a dash before a digit.
func plainStart(text []byte) bool {
	if len(text) == 0 {
		return false
	}
	switch text[0] {
	case '-':
		return len(text) > 1 && '0' <= text[1] && text[1] <= '9'
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return false
	}
	return true
}

// literal reads a literal block scalar ("|" or "|-") whose indicator is at
// byte at of l; its lines must be deeper than col.
func (r *reader) literal(l *line, at, col int) (*yaml.Node, bool) {
	strip := false
	switch rest := l.text[at+1:]; {
	case len(rest) == 0:
	case len(rest) == 1 && rest[0] == '-':
		strip = true
	default:
		return nil, false // keep (+), an indentation indicator or a comment
	}
	n := r.node(yaml.ScalarNode, "!!str", l, at)
	n.Style = yaml.LiteralStyle
	if r.i >= len(r.lines) {
		return nil, false
	}
	first := r.lines[r.i]
	if first.indent == len(first.text) || first.indent <= col || (l.indent != col && first.indent < col+2) {
		// leading blank lines, an empty block, or one of "- key: |"
		// whose lines are not clearly deeper
		return nil, false
	}
	ind := first.indent
	var b strings.Builder
	pending := 0 // blank lines not yet written: kept only when text follows
	broke := false
	for r.i < len(r.lines) {
		ln := r.lines[r.i]
		if ln.indent == len(ln.text) {
			if ln.indent > ind {
				return nil, false // spaces past the indentation
			}
			pending++
			r.i++
			continue
		}
		if ln.indent < ind {
			break
		}
		if b.Len() > 0 || broke {
			b.WriteByte('\n')
		}
		for range pending {
			b.WriteByte('\n')
		}
		pending = 0
		b.Write(ln.text[ind:])
		broke = !ln.last
		r.i++
	}
	// Clip keeps the line break after the last line of text (when there
	// was one); strip keeps none.
	if !strip && broke {
		b.WriteByte('\n')
	}
	n.Value = b.String()
	if r.i < len(r.lines) && r.lines[r.i].indent > col && !r.lines[r.i].blank() {
		return nil, false
	}
	return n, true
}

// flowNode reads a one-line flow collection or scalar at byte at of l and
// returns where it ends.
func (r *reader) flowNode(l *line, at int) (*yaml.Node, int, bool) {
	text := l.text
	if at >= len(text) {
		return nil, 0, false
	}
	switch c := text[at]; c {
	case '[', '{':
		if !r.open() {
			return nil, 0, false
		}
		defer r.close()
		n := r.node(yaml.SequenceNode, "!!seq", l, at)
		n.Style = yaml.FlowStyle
		closer := byte(']')
		if c == '{' {
			n.Kind, n.Tag, closer = yaml.MappingNode, "!!map", '}'
		}
		start := len(r.stack)
		i := skipSpaces(text, at+1)
		if i < len(text) && text[i] == closer {
			return n, i + 1, true
		}
		for {
			if c == '{' {
				end, ok := flowPlain(text, i)
				if !ok || end >= len(text) || text[end] != ':' || end+1 >= len(text) || text[end+1] != ' ' || end-i > maxKey {
					return nil, 0, false
				}
				k := r.scalar(l, i, end)
				if k.Tag != "!!str" {
					return nil, 0, false
				}
				r.push(k)
				i = skipSpaces(text, end+1)
			}
			item, end, ok := r.flowNode(l, i)
			if !ok {
				return nil, 0, false
			}
			r.push(item)
			i = skipSpaces(text, end)
			if i >= len(text) {
				return nil, 0, false
			}
			switch text[i] {
			case closer:
				n.Content = r.children(start)
				return n, i + 1, true
			case ',':
				i = skipSpaces(text, i+1)
				if i >= len(text) || text[i] == closer {
					return nil, 0, false // a trailing comma
				}
			default:
				return nil, 0, false
			}
		}
	case '"', '\'':
		v, end, ok := r.quoted(l, at)
		if !ok {
			return nil, 0, false
		}
		n := r.node(yaml.ScalarNode, "!!str", l, at)
		n.Value, n.Style = v, yaml.DoubleQuotedStyle
		if c == '\'' {
			n.Style = yaml.SingleQuotedStyle
		}
		return n, end, true
	}
	end, ok := flowPlain(text, at)
	if !ok {
		return nil, 0, false
	}
	return r.scalar(l, at, end), end, true
}

func skipSpaces(text []byte, i int) int {
	for i < len(text) && text[i] == ' ' {
		i++
	}
	return i
}

// flowPlain reads a plain scalar inside a flow collection: up to a comma,
// a bracket, a brace or a colon (trailing spaces left out), and returns
// where it ends. One holding a '#' or a '?' is left to go-yaml.
func flowPlain(text []byte, at int) (int, bool) {
	if !plainStart(text[at:]) {
		return 0, false
	}
	i := at
scan:
	for i < len(text) {
		switch text[i] {
		case ',', '[', ']', '{', '}', ':':
			break scan
		case '#', '?': // a comment, or what go-yaml ends a flow scalar at
			return 0, false
		}
		i++
	}
	for i > at && text[i-1] == ' ' {
		i--
	}
	if i == at || bytes.HasPrefix(text[at:i], []byte("<<")) {
		return 0, false
	}
	return i, true
}

// quoted reads a one-line quoted scalar at byte at of l and returns its
// value and the byte after the closing quote.
func (r *reader) quoted(l *line, at int) (string, int, bool) {
	text := l.text
	q := text[at]
	i := at + 1
	var b []byte // the value, once it differs from the text
	for i < len(text) {
		c := text[i]
		switch {
		case c == q && q == '\'' && i+1 < len(text) && text[i+1] == '\'':
			if b == nil {
				b = append([]byte{}, text[at+1:i]...)
			}
			b = append(b, '\'')
			i += 2
			continue
		case c == q:
			if b == nil {
				return r.text(l, at+1, i), i + 1, true
			}
			return string(b), i + 1, true
		case c == '\\' && q == '"':
			ch, size, ok := escape(text[i:])
			if !ok {
				return "", 0, false
			}
			if b == nil {
				b = append([]byte{}, text[at+1:i]...)
			}
			b = utf8.AppendRune(b, ch)
			i += size
			continue
		}
		if b != nil {
			b = append(b, c)
		}
		i++
	}
	return "", 0, false // goes on past the line
}

// escape reads one escape of a double-quoted scalar; escapes that stand
// for YAML's own line breaks and spaces (\N \_ \L \P, a break) are left to
// go-yaml.
func escape(s []byte) (rune, int, bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch s[1] {
	case '0':
		return 0, 2, true
	case 'a':
		return '\a', 2, true
	case 'b':
		return '\b', 2, true
	case 't':
		return '\t', 2, true
	case 'n':
		return '\n', 2, true
	case 'v':
		return '\v', 2, true
	case 'f':
		return '\f', 2, true
	case 'r':
		return '\r', 2, true
	case 'e':
		return 0x1b, 2, true
	case ' ', '"', '\'', '\\': // (not JSON's \/: go-yaml refuses it)
		return rune(s[1]), 2, true
	case 'x', 'u', 'U':
		width := 2
		switch s[1] {
		case 'u':
			width = 4
		case 'U':
			width = 8
		}
		if len(s) < 2+width {
			return 0, 0, false
		}
		v, err := strconv.ParseUint(string(s[2:2+width]), 16, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			return 0, 0, false
		}
		return rune(v), 2 + width, true
	}
	return 0, 0, false
}

// column is the 1-based column, in characters, of byte i of the line.
func (l *line) column(i int) int {
	if l.ascii {
		return i + 1
	}
	return utf8.RuneCount(l.text[:i]) + 1
}
