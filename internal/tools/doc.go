// Package tools owns the tools an agent uses on its workspace — list_files,
// read_file, write_file, edit_file, delete_file, search and run_command —
// each confined to the workspace folder (absolute paths and ".." are
// refused, and every file operation goes through an os.Root, which does not
// follow a symlink out), each bounded (output cut at max_tool_output_chars
// with a marker; file, file-count and workspace-size bounds enforced on
// every write).
package tools
