/* example_queue.c - the README's host program for queues, events and
 * graphs (built and run by `make check`, so it cannot rot). Outside the
 * tree:  cc example_queue.c $(pkg-config --cflags --libs vt)
 *
 * It records a tiny decode step (scale the logits, take the argmax) as a
 * graph once, then replays it per step: the logits reach the device by an
 * async copy, the sampled id comes back into pinned host memory by another,
 * and one event tells the host it is there. Device: argv[1] or "cpu". */
#include <stdio.h>

#include <vt/vt.h>

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        vt_status st_ = (call);                                                                                        \
        if (st_ != VT_OK) {                                                                                            \
            fprintf(stderr, "%s: %s\n", vt_status_name(st_), vt_last_error());                                         \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

/* Record the step on q: ids = argmax(logits * 0.5). */
static vt_status record_step(vt_queue *q, vt_tensor *logits, vt_tensor *scaled, vt_tensor *ids, vt_graph **g)
{
    vt_params_scale half = {0.5f};
    const vt_tensor *in[1] = {logits}, *in2[1] = {scaled};
    vt_tensor *out[1] = {scaled}, *out2[1] = {ids};
    vt_status st = vt_graph_begin(q);
    if (st == VT_OK)
        st = vt_op_enqueue(q, VT_OP_SCALE, in, 1, out, 1, &half, sizeof half);
    if (st == VT_OK)
        st = vt_op_enqueue(q, VT_OP_ARGMAX, in2, 1, out2, 1, NULL, 0);
    vt_graph *got = NULL;
    vt_status end = vt_graph_end(q, &got); /* always end what began */
    *g = got;
    return st != VT_OK ? st : end;
}

int main(int argc, char **argv)
{
    vt_registry *reg = NULL;
    vt_device *dev = NULL;
    CHECK(vt_registry_open(&reg, NULL));
    CHECK(vt_registry_find_device(reg, argc > 1 ? argv[1] : "cpu", &dev));

    enum { V = 8 };
    int64_t shape[2] = {1, V}, one = 1;
    vt_tensor *logits = NULL, *scaled = NULL, *ids = NULL;
    CHECK(vt_tensor_create(dev, VT_F32, 2, shape, &logits));
    CHECK(vt_tensor_create(dev, VT_F32, 2, shape, &scaled));
    CHECK(vt_tensor_create(dev, VT_I32, 1, &one, &ids));

    vt_queue *q = NULL;
    vt_event *ready = NULL;
    vt_graph *step = NULL;
    CHECK(vt_queue_create(dev, &q));
    CHECK(vt_event_create(dev, &ready));
    CHECK(record_step(q, logits, scaled, ids, &step));

    float *host_logits = NULL;
    int32_t *host_id = NULL;
    bool pin_l = false, pin_i = false;
    CHECK(vt_device_host_alloc(dev, V * sizeof(float), (void **)&host_logits, &pin_l));
    CHECK(vt_device_host_alloc(dev, sizeof(int32_t), (void **)&host_id, &pin_i));

    int bad = 0;
    for (int t = 0; t < 3; t++) {
        for (int j = 0; j < V; j++)
            host_logits[j] = j == (t * 3 + 1) % V ? 2.0f : 0.0f; /* this step's "model output" */
        CHECK(vt_tensor_write_async(q, logits, 0, host_logits, V * sizeof(float)));
        CHECK(vt_graph_launch(step, q)); /* no re-recording, no host wait */
        CHECK(vt_tensor_read_async(q, ids, 0, host_id, sizeof(int32_t)));
        CHECK(vt_event_record(ready, q));
        CHECK(vt_event_synchronize(ready)); /* the one wait of the step; device errors surface here */
        printf("step %d: token %d\n", t, (int)*host_id);
        bad += *host_id != (t * 3 + 1) % V;
    }

    vt_device_host_free(dev, host_logits, pin_l);
    vt_device_host_free(dev, host_id, pin_i);
    vt_graph_destroy(step);
    vt_event_destroy(ready);
    vt_queue_destroy(q);
    vt_tensor_destroy(logits);
    vt_tensor_destroy(scaled);
    vt_tensor_destroy(ids);
    vt_registry_close(reg);
    return bad ? 1 : 0;
}
