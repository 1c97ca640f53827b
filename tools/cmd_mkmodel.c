/* cmd_mkmodel.c - `vtctl mkmodel --arch qwen3|qwen3moe|qwen3next
 * --preset tiny|small|8b-shape --wtype TYPE --seed S [--layers N] OUT.gguf`:
 * a synthetic model with random, well-conditioned weights in llama.cpp's
 * GGUF layout (vt_mkmodel.h). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <vt/vt_mkmodel.h>
#include <vt/vt_number.h>

#include "vtctl.h"

int vtctl_cmd_mkmodel(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"arch", required_argument, NULL, 'a'},   {"preset", required_argument, NULL, 'p'},
        {"wtype", required_argument, NULL, 'w'},  {"seed", required_argument, NULL, 's'},
        {"layers", required_argument, NULL, 'l'}, {NULL, 0, NULL, 0}};
    vt_mkmodel_options o = {sizeof o, NULL, "tiny", VT_F32, 1, 0};
    const char *wtype = "f32";
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int64_t layers;
        switch (c) {
        case 'a': o.arch = optarg; break;
        case 'p': o.preset = optarg; break;
        case 'w': wtype = optarg; break;
        case 's':
            if (!vt_parse_u64(optarg, &o.seed))
                return vtctl_usage_error(argv[0], "--seed '%s' is not an unsigned number", optarg);
            break;
        case 'l':
            if (!vt_parse_i64(optarg, 1, 4096, &layers))
                return vtctl_usage_error(argv[0], "--layers '%s' is not 1..4096", optarg);
            o.n_layers = (uint32_t)layers;
            break;
        default: return vtctl_usage_error(argv[0], "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!o.arch)
        return vtctl_usage_error(argv[0], "--arch is required (qwen3, qwen3moe, qwen3next)");
    if (optind != argc - 1)
        return vtctl_usage_error(argv[0], "name one output file");
    if (!vt_dtype_from_name(wtype, &o.wtype))
        return vtctl_usage_error(argv[0], "--wtype '%s' is not a type name", wtype);
    vt_status st = vt_mkmodel_write(&o, argv[optind]);
    if (st != VT_OK) {
        fprintf(stderr, "vtctl mkmodel: %s\n", vt_last_error());
        return st == VT_E_INVALID_ARG ? VTCTL_EXIT_USAGE : VTCTL_EXIT_REFUSED;
    }
    return VTCTL_EXIT_OK;
}
