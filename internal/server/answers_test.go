package server

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every field of every answer of the JSON API is in docs/api.md, and an
// answer of several fields is there as the list docs/api.md writes it:
// `{"run_id", "url", "api"}`.
func TestTheAPIsAnswersAreDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := string(raw)
	for _, answer := range []any{apiErrorBody{}, runAccepted{}, runStopping{}, approvalList{}, approvalItem{}, approvalAnswered{}, health{}, suiteAccepted{}} {
		typ := reflect.TypeOf(answer)
		var always []string
		for i := range typ.NumField() {
			name, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(docs, `"`+name+`"`) {
				t.Errorf("%s: docs/api.md does not name its field %q", typ.Name(), name)
			}
			if opts != "omitempty" {
				always = append(always, `"`+name+`"`)
			}
		}
		if list := "{" + strings.Join(always, ", ") + "}"; len(always) > 1 && !strings.Contains(docs, list) {
			t.Errorf("%s: docs/api.md does not give its answer as %s", typ.Name(), list)
		}
	}
}
