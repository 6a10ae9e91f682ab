#!/bin/sh
# the fuzz campaign (seed 3): --cpu-offload-gb 1e308 is finite, its bytes (x 2^30) are not
vllm serve mistralai/Mixtral-8x7B-Instruct-v0.1 --cpu-offload-gb 1e308 --gpu-memory-utilization 1
