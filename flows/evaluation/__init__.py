"""Evaluation: answer benchmark questions, score and judge them, ablations."""
