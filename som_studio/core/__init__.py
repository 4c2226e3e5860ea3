"""Pure numerics: the SOM problem, the implementations, map quality. No Qt here."""
