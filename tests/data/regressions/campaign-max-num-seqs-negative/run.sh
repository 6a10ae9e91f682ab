#!/bin/sh
# the fuzz campaign (seed 4): a negative --max-num-seqs under pipeline parallelism divided by zero
vllm serve meta-llama/Llama-3.1-8B-Instruct -pp 2 --max-num-seqs -1
