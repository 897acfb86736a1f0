package screen

import "unsafe"

// A cell read or written as one 64-bit word: the rune in the low half and
// the style id in the high half, as cells lie in memory on little-endian
// machines. The hot loops (printing ASCII runs, encoding lines for the
// scrollback, finding a line's blank tail) move and compare whole words
// instead of two 32-bit fields.

// cellWords views c as words (only when wordCells holds).
func cellWords(c []cell) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(c))), len(c))
}

// cellWord is cell{r, st} as a word.
func cellWord(r int32, st uint32) uint64 { return uint64(uint32(r)) | uint64(st)<<32 }

// wordCells reports whether cells lie in memory as cellWord says (false on
// big-endian machines, which take the cell-by-cell loops).
var wordCells = func() bool {
	c := []cell{{r: 0x12345678, st: 0x9abcdef0}}
	return cellWords(c)[0] == cellWord(0x12345678, 0x9abcdef0)
}()
