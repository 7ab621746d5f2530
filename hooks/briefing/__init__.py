"""briefing: the code behind hooks/briefing-preload, one module per concern.

Read in this order (each imports only modules above it, except where it says so):

    constants     limits that every part shares (parts, caps, refusal bounds)
    records       ParseError, Unreadable, Frontmatter, Agent, Skill, Project
    text          how text is shown to people: escaping, clipping, byte lengths
    jsontext      JSON in and out without ``import json``
    names         skill and agent names, globs, de-duplication
    yaml_subset   agent and skill frontmatter (the YAML briefing reads)
    toml_subset   Codex role files and config, the comment declarations
    files         reading files safely, paths as people see them, the plugin root
    rules         .briefing/rules.json: parse, read, match
    standing      project files in rules and declarations: entries, globs, inside the project
                  (imported only when a rule or declaration names files)
    lookup        discovery that harnesses share: agent files, skill candidates
    substitution  a skill body as its harness renders it (variables, commands)
    rendering     framing, seals and parts
    harnesses/    the registry (what detection reads) and one module per harness,
                  each holding all that differs for it
    machine       Machine: one payload's view of this machine, memoised
    resolution    Briefing: the one source of every verdict
    loaded        skills an agent loaded while it worked, given back after a compaction
                  (issue 45; imported only where a harness may re-deliver them)
    handlers      the hook events and the dispatch table; emit() owns stdout
    private       briefing's private skill folders, which no harness reads (imported
                  by resolution only when a name missed in the harness's roots)
    survey        every declaring agent judged, for the pre-flight and the doctor
    doctor        the briefing-doctor CLI (doctor mode only)
    hooks_files   reading hooks files, for the doctor's checks (imported by them)
    main          main(argv): the one entry, hook mode or doctor mode

A hook run imports what its event and harness need and nothing else: no doctor,
no survey outside session start, and only the harness that sent the payload.
"""

