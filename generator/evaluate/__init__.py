"""The evaluation stage: load a BEIR dataset, run the four rows, score them, write results.json.

Modules: options (what a run is asked to do, every default), data (the validating BEIR
loader), models (resolving and loading models), cache (embeddings and rerank scores on disk),
retrieval (the four rows), fusion (RRF and min-max), metrics, diagnosis, uncertainty (paired
statistics), sample_check (sample versus full query set), runfiles (TREC run files), pipeline
(the orchestration and the writer) and selftest (the scorer's fixtures). Heavy libraries are
imported inside the functions that need them.
"""
