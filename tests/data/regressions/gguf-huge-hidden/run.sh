#!/bin/sh
llama-server -m ./m.gguf -ngl 99 -c 1000000000
