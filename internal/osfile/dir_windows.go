package osfile

import "os"

// openDir: Windows opens a folder with os.O_RDONLY as it is.
const openDir = 0

// syncDir does nothing on Windows: a folder's handle cannot be flushed
// (FlushFileBuffers refuses it), and NTFS journals the names in it.
func syncDir(*os.File) error { return nil }

// NoFollow: Windows has no such open flags; a reader checks what it opened.
const NoFollow = 0
