"""The reference interpreter over cortex IR, and the call boundary both runners share."""
