package main

import "strings"

func splitFields(s string) []string { return strings.Fields(s) }
