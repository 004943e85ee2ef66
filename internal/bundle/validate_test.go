package bundle

import (
	"strconv"
	"testing"
)

// A name an agent chose is written on the receipt without losing a byte,
// and the receipt stays valid whatever the name is.
func TestPathNameKeepsEveryByte(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"a/b.txt", "a/b.txt"},
		{"é/ü.txt", "é/ü.txt"},
		{"bad\xff\xfe.txt", `"bad\377\376.txt"`},
		{`back\slash`, `"back\\slash"`},
		{`"quoted"`, `"\"quoted\""`},
		{"new\nline", `"new\012line"`},
	} {
		got := PathName(tc.name)
		if got != tc.want {
			t.Errorf("PathName(%q) = %s, want %s", tc.name, got, tc.want)
		}
		if raw, err := strconv.Unquote(got); got != tc.name && (err != nil || raw != tc.name) {
			t.Errorf("%s does not read back as %q: %q %v", got, tc.name, raw, err)
		}
		if !validRelPath(got) {
			t.Errorf("%s is not a valid name on a receipt", got)
		}
	}
	for _, bad := range []string{`"..\057x"`, `"/etc/passwd"`, `a\b`, `"a\000b"`} {
		if validRelPath(bad) {
			t.Errorf("%s passed as a clean relative path", bad)
		}
	}
}
