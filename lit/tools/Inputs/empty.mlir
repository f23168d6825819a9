// Nothing but a comment: an empty module.
