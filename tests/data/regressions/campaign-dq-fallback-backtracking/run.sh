#!/bin/sh
# the fuzz campaign (shell-text generator, seed 31), reduced: the lexer fell back to the
# grammar's double-quote regex, which backtracks exponentially here (76 s before _dq_end)
vllm serve m "$(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(a) ${b} $(
