// SPDX-License-Identifier: GPL-2.0
/*
 * Threads and context switches: the main thread plays ping-pong with a
 * thread through a pair of pipes (stepped and compared: pingpong()), 10
 * round trips, blocking in read() every time.  Only the main thread is
 * traced and stepped; it never joins (the path of pthread_join depends on
 * whether the thread has exited yet), it reads the thread's last message
 * and exits.
 */
#include <pthread.h>
#include "conf.h"

#define ROUNDS 10

struct pp {
	int to[2], from[2];
};

KNOWN void *player(void *arg)
{
	struct pp *p = arg;
	char c;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		if (read(p->to[0], &c, 1) != 1)
			break;
		c++;
		if (write(p->from[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

/* the part stepped and compared: pthread_create() is thousands of steps */
KNOWN int pingpong(struct pp *p)
{
	int i, sum = 0;
	char c;

	for (i = 0; i < ROUNDS; i++) {
		c = 0;
		if (write(p->to[1], &c, 1) != 1 || read(p->from[0], &c, 1) != 1)
			return -1;
		sum += c;
	}
	return sum;
}

int main(void)
{
	struct pp p;
	pthread_t t;
	int sum;

	if (pipe(p.to) || pipe(p.from))
		return 1;
	if (pthread_create(&t, NULL, player, &p))
		return 1;
	sum = pingpong(&p);
	say("threads\n");
	return sum != ROUNDS;
}
