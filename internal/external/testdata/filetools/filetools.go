// Package filetools is the read_file and write_file tools the small test
// agents share (responsesagent, messagesagent, geminiagent): each runs a
// tool in its working folder, whatever API it speaks.
package filetools

import (
	"encoding/json"
	"os"
)

// Execute runs a tool in root; a problem is its output.
func Execute(root *os.Root, name, args string) string {
	var a struct{ Path, Content string }
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return "error: " + err.Error()
	}
	switch name {
	case "read_file":
		data, err := root.ReadFile(a.Path)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(data)
	case "write_file":
		if err := root.WriteFile(a.Path, []byte(a.Content), 0o644); err != nil {
			return "error: " + err.Error()
		}
		return "wrote " + a.Path
	}
	return "error: no tool " + name
}
