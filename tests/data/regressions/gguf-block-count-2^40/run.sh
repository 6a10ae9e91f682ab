#!/bin/sh
llama-server -m ./m.gguf -ngl 99
