package toolcache

import "os"

// ownLayer: a folder's access on Windows is its ACL; the layer is a
// folder of the data folder.
func ownLayer(dir string) bool {
	info, err := os.Lstat(dir)
	return err == nil && info.IsDir()
}
