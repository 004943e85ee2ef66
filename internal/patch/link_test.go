package patch_test

import (
	"testing"

	"github.com/proctor-dev/proctor/internal/patch"
)

func TestALinkLeavesTheTreeWhenItClimbsOut(t *testing.T) {
	for _, tc := range []struct {
		path, target string
		leaves       bool
	}{
		{"a", "/etc/passwd", true},
		{"a", "../x", true},
		{"d/a", "../x", false},
		{"d/a", "../../x", true},
		{"d/a", "./../.././x", true},
		{"d/a", "b/../../c", false},
		{"a", "sub", false},
		{"a", ".", false},
		{"a", "..", true},
		{"a", "", true},
	} {
		if got := patch.LeavesTree(tc.path, tc.target); got != tc.leaves {
			t.Errorf("LeavesTree(%q, %q) = %v, want %v", tc.path, tc.target, got, tc.leaves)
		}
	}
}

// A link's diff says where it points, and whether that is outside.
func TestParseReadsALinksTarget(t *testing.T) {
	diff := "diff --git a/key b/key\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/key\n@@ -0,0 +1 @@\n+/root/.ssh/id_probe\n\\ No newline at end of file\n" +
		"diff --git a/d/in b/d/in\nnew file mode 120000\nindex 0000000..2222222\n--- /dev/null\n+++ b/d/in\n@@ -0,0 +1 @@\n+../a.txt\n\\ No newline at end of file\n" +
		"diff --git a/plain b/plain\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/plain\n@@ -0,0 +1 @@\n+/root/.ssh/id_probe\n"
	files, err := patch.Parse(diff)
	if err != nil || len(files) != 3 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	for i, want := range []struct {
		link   string
		leaves bool
	}{{"/root/.ssh/id_probe", true}, {"../a.txt", false}, {"", false}} {
		if files[i].Link != want.link || files[i].Leaves != want.leaves {
			t.Errorf("%s: link %q leaves %v, want %q %v", files[i].Path(), files[i].Link, files[i].Leaves, want.link, want.leaves)
		}
	}
}
