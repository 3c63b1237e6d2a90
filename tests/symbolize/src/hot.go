// A Go program with two hot functions, linked by Go's own linker with a GNU
// build-id note (-ldflags '-B 0x...'), so that its debug info can be found by
// build-id like a C program's.  ~0.5 s of CPU with no argument; an argument
// scales it.
package main

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func goFib(n uint64) uint64 {
	a, b := uint64(0), uint64(1)
	var acc uint64
	for i := uint64(0); i < n; i++ {
		a, b = b, a+b
		acc ^= a * 0x9e3779b97f4a7c15
	}
	return acc
}

//go:noinline
func goPrimes(n uint64) uint64 {
	var count uint64
	for c := uint64(2); c < n; c++ {
		prime := true
		for d := uint64(2); d*d <= c; d++ {
			if c%d == 0 {
				prime = false
				break
			}
		}
		if prime {
			count++
		}
	}
	return count
}

func main() {
	scale := 1.0
	if len(os.Args) > 1 {
		if s, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			scale = s
		}
	}
	base := uint64(scale * 1000000)
	r := goFib(base*380) + goPrimes(base*2)
	fmt.Println("hot.go", r)
}
