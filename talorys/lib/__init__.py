"""What every app shares and no app owns: the error root, env helpers, the tool contract and
registry, the search registry, request-body limits, pagination. Imports no app of Talorys."""
