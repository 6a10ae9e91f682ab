#!/bin/sh
llama-server -m Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -np 1000000000 -c 1000000000
