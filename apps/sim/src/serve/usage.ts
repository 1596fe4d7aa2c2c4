// serve's usage lines, kept apart so that other commands do not load the server.

export const SERVE_USAGE = `  poise-sim serve <case-dir> [--port <p>] [--host <addr>] [--speed <n> | --step]
        (--token USER@REALM!TOKENID=SECRET | --token-file <file>) [--cert <pem> --key <pem>]
        [--pve-version <v>] [--crs-object] [--manager-config <file>]`;
